package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/promotion"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// publishOpts say how an ingest stands in the publication workflow: an
// ingest into a target other than production is staged; one into
// production is a promotion when the staged target is configured, and
// compares its inputs with the staged ingest of the same source run.
type publishOpts struct {
	stagedTarget  *setting
	requireStaged *bool
	// staged is the staged target's database, when configured (check).
	staged *target
}

func addPublish(s *settings) *publishOpts {
	return &publishOpts{
		stagedTarget: s.str("staged-target", "staging", "target whose ledger a production ingest compares its inputs with (a promotion)", "INGEST_STAGED_TARGET"),
		requireStaged: s.flag("require-staged", "refuse a production ingest whose inputs differ from the staged ingest of the run, or that was never staged",
			"INGEST_REQUIRE_STAGED"),
	}
}

// check settles the staged target of a production ingest (c is resolved):
// configured, it makes the ingest a promotion; not configured, a plain
// production ingest — a usage error under --require-staged.
func (p *publishOpts) check(c *commonOpts) error {
	p.staged = nil
	if c.target.name != ProductionTarget {
		if *p.requireStaged {
			return fmt.Errorf("--require-staged applies to a production ingest, not to target %s", c.target.name)
		}
		return nil
	}
	name := p.stagedTarget.String()
	if name == "" || name == ProductionTarget {
		return fmt.Errorf("%s: %q cannot be the staged target", p.stagedTarget.label(), name)
	}
	// Resolved as its own target: never --database-url (production's).
	prod := *c.dbURL
	prod.given = false
	t, err := resolveTarget(name, &prod, c.targetsFile.String(), c.getenv)
	if err != nil {
		if *p.requireStaged {
			return fmt.Errorf("--require-staged: the staged target: %v", err)
		}
		if strings.HasPrefix(err.Error(), "unknown target") {
			return nil
		}
		return fmt.Errorf("%s: %v", p.stagedTarget.label(), err)
	}
	p.staged = &t
	return nil
}

// configure sets cfg.Publish for the ingest: a staged ingest records its
// tree digest; a promotion compares with the staged ingest (and is always
// read in full, so that the comparison is made). The returned func closes
// the connection to the staging database.
func (p *publishOpts) configure(cfg *ingest.Config, c *commonOpts, log *zap.Logger) func() {
	if c.target.name != ProductionTarget {
		cfg.Publish = stagedPublish(c.server)
		return func() {}
	}
	if p.staged == nil {
		return func() {}
	}
	cfg.Reread = true
	var staging *store.Store
	staged := *p.staged
	production := c.server // what production's server said it is (checkServer)
	require := *p.requireStaged
	cfg.Publish = func(ctx context.Context, run schema.RunIdentity, tree, index []byte, records json.RawMessage) (*schema.Publication, error) {
		notCompared := func(why string) (*schema.Publication, error) {
			if require {
				return nil, fmt.Errorf("--require-staged: %s", why)
			}
			return &schema.Publication{Kind: schema.PublicationPromotion, TreeDigest: promotion.TreeDigest(tree),
				StagedTarget: staged.name, NotCompared: why}, nil
		}
		if staging == nil {
			opts := c.store
			st, err := store.OpenWith(ctx, staged.url, opts, log.Named("staging"))
			if err != nil {
				log.Warn("the staging database cannot be read: the promotion is not compared", zap.String("target", staged.name), zap.Error(err))
				return notCompared(fmt.Sprintf("the %s database cannot be read (%s)", staged.name, store.DatabaseName(staged.url)))
			}
			staging = st
		}
		// The staged ingest must come from another database than
		// production's, as the servers say (never the URLs' text): a
		// staging URL spelling production's database otherwise compares
		// production with itself.
		if production != nil {
			id, err := staging.Identity(ctx)
			if err != nil {
				return notCompared(fmt.Sprintf("the %s database cannot say what it is: %v", staged.name, err))
			}
			if id.Same(*production) {
				return notCompared(fmt.Sprintf("the %s target (%s) is the production database (%s): there is no staged ingest to compare with",
					staged.name, staged.origin(), id))
			}
		}
		s, ok, err := staging.StagedIngest(ctx, run, staged.name)
		if err != nil {
			return notCompared(fmt.Sprintf("the %s ledger cannot be read: %v", staged.name, err))
		}
		if !ok {
			return notCompared(fmt.Sprintf("run %d was never staged in %s", run.SourceRunID, staged.name))
		}
		if production != nil && s.Server != nil && s.Server.Same(*production) {
			return notCompared(fmt.Sprintf("staged ingest #%d (%s) was written to the production database (%s), not staged",
				s.IngestID, staged.name, s.Server))
		}
		pub, err := promotion.Compare(s, promotion.Input{Attempt: run.SourceRunAttempt, Tree: tree, FileIndex: index, Records: records})
		if err != nil {
			return nil, err
		}
		if require && !pub.SameInputs {
			return nil, fmt.Errorf("--require-staged: the inputs differ from staged ingest #%d (%s): %s",
				s.IngestID, staged.name, differenceList(pub.Differences, 5))
		}
		return &pub, nil
	}
	return func() {
		if staging != nil {
			staging.Close()
		}
	}
}

// differenceList names up to n differences on one line.
func differenceList(ds []schema.ArtifactDifference, n int) string {
	var parts []string
	for i, d := range ds {
		if i == n {
			parts = append(parts, fmt.Sprintf("… and %d more", len(ds)-n))
			break
		}
		s := d.Change + " " + d.Artifact
		if d.Detail != "" {
			s += " (" + d.Detail + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// stagedPublish is the publication section of an ingest into a target
// other than production: staged, with the digest of the tree it read and
// the server and database it was written to (server, as checkServer read
// it).
func stagedPublish(server *schema.ServerIdentity) func(context.Context, schema.RunIdentity, []byte, []byte, json.RawMessage) (*schema.Publication, error) {
	return func(_ context.Context, _ schema.RunIdentity, tree, _ []byte, _ json.RawMessage) (*schema.Publication, error) {
		return &schema.Publication{Kind: schema.PublicationStaged, TreeDigest: promotion.TreeDigest(tree), Server: server}, nil
	}
}
