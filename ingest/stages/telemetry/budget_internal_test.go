package telemetry

import (
	"context"
	"testing"
	"time"
)

// admitted reports whether acquire returns within a short wait.
func admitted(b *parseBudget, size int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	return b.acquire(ctx, size) == nil
}

// TestParseBudget: two small files parse side by side, never a third; a
// file that would overrun the budget waits until it can run alone or fit;
// a file larger than the budget runs alone; a release lets the waiting
// file in.
func TestParseBudget(t *testing.T) {
	b := newParseBudget()
	for i := range 2 {
		if !admitted(b, 1<<20) {
			t.Fatalf("small file %d of 2 not admitted", i+1)
		}
	}
	if admitted(b, 1) {
		t.Fatal("a third file was admitted beside two")
	}
	b.release(1 << 20)
	if admitted(b, parseBudgetBytes) {
		t.Fatal("a file overrunning the budget was admitted beside another")
	}
	done := make(chan error, 1)
	go func() { done <- b.acquire(context.Background(), 2*parseBudgetBytes) }()
	select {
	case <-done:
		t.Fatal("a file larger than the budget was admitted beside another")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(1 << 20)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("the release did not admit the waiting file")
	}
	if admitted(b, 1) {
		t.Fatal("a file was admitted beside one larger than the budget")
	}
}
