package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// CancelledError is the cause of a context cancelled by a signal: the
// reason an interrupted ingest prints and records, "cancelled (SIGTERM)".
type CancelledError struct {
	// Signal is the signal's name: SIGTERM or SIGINT.
	Signal string
}

func (e *CancelledError) Error() string { return "cancelled (" + e.Signal + ")" }

// Is makes a signal's cancellation a context.Canceled for errors.Is.
func (e *CancelledError) Is(target error) bool { return target == context.Canceled }

// SignalContext returns a context cancelled by the first SIGINT or SIGTERM,
// with a *CancelledError naming the signal as its cause. A second signal
// is not caught: it ends the process as usual. stop releases the handler.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(&CancelledError{Signal: signalName(s)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(context.Canceled)
	}
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// cancelled is err, or the cancellation's cause when ctx was cancelled:
// what fails then reports only the effect (a closed connection, an
// aborted download).
func cancelled(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}
