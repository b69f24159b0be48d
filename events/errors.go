package events

import (
	"errors"
	"fmt"
)

// ErrConflict is what a ConflictError matches with errors.Is.
var ErrConflict = errors.New("aggregate changed concurrently")

// ConflictError says that an append expected the aggregate to end at one sequence and it ended elsewhere: somebody
// else appended first. Reload and decide again (Update does), or report it.
type ConflictError struct {
	Ref      Ref
	Expected Version
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("append to %s: expected it at sequence %d: %v", e.Ref, e.Expected.Seq, ErrConflict)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
