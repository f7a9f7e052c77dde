package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/inferencex/ingest/ingest/receipt"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// maxReceiptBytes bounds a receipt read into memory.
const maxReceiptBytes = 64 << 20

// VerifyReceipt reads the tree's measurement receipt, when it has one, and
// checks every member of every artifact it lists that the tree holds: the
// file is there, with the receipt's size and sha256, and the artifact holds
// no file the receipt does not list. Each mismatch is a run failure naming
// the artifact and file; an unreadable receipt is one naming receipt.json.
// A receipt is recognised and verified, never required. It returns the
// execution records the receipt names, by artifact (nil without one).
func VerifyReceipt(tree *source.Tree, t *Tally) map[string]map[string]bool {
	if !tree.HasReceipt {
		return nil
	}
	r, err := readReceipt(tree)
	if err != nil {
		t.Fail(schema.CategoryRun, "", receipt.File, err.Error())
		return nil
	}
	d := &t.Summary().Details
	d.Receipts++
	for _, ra := range r.Artifacts {
		a := tree.Artifact(ra.Name)
		if a == nil {
			t.Note(fmt.Sprintf("%s lists artifact %s, which the tree does not hold", receipt.File, ra.Name))
			continue
		}
		verifyMembers(a, ra, t)
	}
	return r.ExecutionPaths()
}

func readReceipt(tree *source.Tree) (*receipt.Receipt, error) {
	f, err := tree.OpenReceipt()
	if err != nil {
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReceiptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxReceiptBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxReceiptBytes)
	}
	return receipt.Parse(data)
}

// verifyMembers checks one artifact against its receipt entry.
func verifyMembers(a *source.Artifact, ra receipt.Artifact, t *Tally) {
	fsys, err := a.FS()
	if err != nil {
		t.Fail(schema.CategoryRun, a.Name, "", fmt.Sprintf("cannot verify against %s: %v", receipt.File, err))
		return
	}
	defer a.Release()
	d := &t.Summary().Details
	listed := make(map[string]bool, len(ra.Members))
	for _, m := range ra.Members {
		listed[m.Path] = true
		d.ReceiptMembers++
		if reason := memberMismatch(fsys, m); reason != "" {
			t.Fail(schema.CategoryRun, a.Name, m.Path, reason)
		}
	}
	for _, f := range a.Files {
		if !listed[f] {
			t.Fail(schema.CategoryRun, a.Name, f, "not a member of the artifact in "+receipt.File)
		}
	}
}

// memberMismatch says how a member's file differs from the receipt, or "".
func memberMismatch(fsys fs.FS, m receipt.Member) string {
	f, err := fsys.Open(m.Path)
	if err != nil {
		return fmt.Sprintf("member of %s missing from the artifact: %v", receipt.File, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Sprintf("cannot read to verify against %s: %v", receipt.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.SHA256 || n != m.Size {
		return fmt.Sprintf("digest mismatch: sha256 %s, %d bytes; %s lists sha256 %s, %d bytes", got, n, receipt.File, m.SHA256, m.Size)
	}
	return ""
}
