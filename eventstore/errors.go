package eventstore

import (
	"errors"
	"fmt"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// ErrConflict is what a ConflictError matches with errors.Is.
var ErrConflict = errors.New("aggregate changed concurrently")

// ConflictError says that an append expected the aggregate to end at one sequence and it ended elsewhere: somebody
// else appended first. Reload and decide again (Update does), or report it.
type ConflictError struct {
	Ref      events.Ref
	Expected events.Version
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("append to %s: expected it at sequence %d: %v", e.Ref, e.Expected.Seq, ErrConflict)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ErrInvalidRef is what a load or read of a reference or filter that is not a valid subject matches with
// errors.Is. The faces check every ID from outside first (internal/ids); this is the line below them, so that an
// ID one of them let through is refused rather than read as a wildcard or sent as a subject the server closes the
// connection over.
var ErrInvalidRef = errors.New("not a valid aggregate reference")

// checkRef refuses a reference whose type or ID is not one subject token.
func checkRef(r events.Ref) error {
	if natsx.ValidToken(r.Type) && natsx.ValidToken(r.ID) {
		return nil
	}
	return &errs.Error{Code: errs.Invalid, Message: "not a valid ID", Err: fmt.Errorf("%.80q/%.80q: %w", r.Type, r.ID, ErrInvalidRef)}
}

// checkFilters refuses a filter that is not a valid subject filter or is longer than natsx.MaxSubjectLen.
func checkFilters(filters []string) error {
	for _, f := range filters {
		if !natsx.ValidSubject(f, true) {
			return &errs.Error{Code: errs.Invalid, Message: "not a valid ID", Err: fmt.Errorf("filter %.120q: %w", f, ErrInvalidRef)}
		}
	}
	return nil
}
