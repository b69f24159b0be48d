package workflow

import (
	"slices"
	"time"
)

// TransitionType is Julep's transition type.
type TransitionType string

// The transition types.
const (
	TypeInit         TransitionType = "init"
	TypeInitBranch   TransitionType = "init_branch"
	TypeStep         TransitionType = "step"
	TypeWait         TransitionType = "wait"
	TypeResume       TransitionType = "resume"
	TypeFinishBranch TransitionType = "finish_branch"
	TypeFinish       TransitionType = "finish"
	TypeError        TransitionType = "error"
	TypeCancelled    TransitionType = "cancelled"
)

// Status is an execution's status.
type Status string

// The statuses.
const (
	StatusQueued        Status = "queued"
	StatusStarting      Status = "starting"
	StatusRunning       Status = "running"
	StatusAwaitingInput Status = "awaiting_input"
	StatusSucceeded     Status = "succeeded"
	StatusFailed        Status = "failed"
	StatusCancelled     Status = "cancelled"
)

// validNext is Julep's table (the check_valid_transition trigger of its transitions table, which also allows
// finish_branch after finish_branch, and finish after init_branch). "" stands for no transition yet.
var validNext = map[TransitionType][]TransitionType{
	"":               {TypeInit, TypeInitBranch, TypeError, TypeCancelled},
	TypeInit:         {TypeWait, TypeError, TypeStep, TypeCancelled, TypeInitBranch, TypeFinish},
	TypeInitBranch:   {TypeWait, TypeError, TypeStep, TypeCancelled, TypeInitBranch, TypeFinishBranch, TypeFinish},
	TypeWait:         {TypeResume, TypeStep, TypeCancelled, TypeFinish, TypeFinishBranch},
	TypeResume:       {TypeWait, TypeError, TypeCancelled, TypeStep, TypeFinish, TypeFinishBranch, TypeInitBranch},
	TypeStep:         {TypeWait, TypeError, TypeCancelled, TypeStep, TypeFinish, TypeFinishBranch, TypeInitBranch},
	TypeFinishBranch: {TypeWait, TypeError, TypeCancelled, TypeStep, TypeFinish, TypeInitBranch, TypeFinishBranch},
	TypeFinish:       {},
	TypeError:        {},
	TypeCancelled:    {},
}

// CanFollow reports whether next may follow prev ("" when there is no transition yet). Contrail applies it to
// the transitions of one scope (a workflow or branch being run), as Julep's sequential runs did for the whole
// execution; parallel branches interleave their scopes.
func CanFollow(prev, next TransitionType) bool {
	allowed, ok := validNext[prev]
	return ok && slices.Contains(allowed, next)
}

// StatusOf is the status an execution takes with a transition of type t (Julep's transition_to_execution_status).
func StatusOf(t TransitionType) Status {
	switch t {
	case "":
		return StatusQueued
	case TypeInit:
		return StatusStarting
	case TypeWait:
		return StatusAwaitingInput
	case TypeFinish:
		return StatusSucceeded
	case TypeError:
		return StatusFailed
	case TypeCancelled:
		return StatusCancelled
	}
	return StatusRunning
}

// Terminal reports whether nothing may follow t.
func (t TransitionType) Terminal() bool {
	return t == TypeFinish || t == TypeError || t == TypeCancelled
}

// Terminal reports whether the status is final.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}

// Target is where a transition happens: a workflow (or branch) and a step of it, in a scope.
type Target struct {
	// Workflow names the steps being run: a workflow ("main") or a branch ("main[2].foreach[3]").
	Workflow string `json:"workflow"`
	Step     int    `json:"step"`
	// Scope numbers the run of those steps within the execution (Julep's scope_id).
	Scope int `json:"scope"`
}

// Transition is one step of an execution. The fields after Metadata are Contrail's, for the fold.
type Transition struct {
	Type      TransitionType `json:"type"`
	Output    any            `json:"output"`
	Current   Target         `json:"current"`
	Next      *Target        `json:"next"`
	StepLabel string         `json:"step_label,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	At        time.Time      `json:"created_at"`

	// Branch says what started a branch (on init_branch).
	Branch *Branch `json:"branch,omitempty"`
	// Returned marks a finish or finish_branch that a return step caused.
	Returned bool `json:"returned,omitempty"`
}

// BranchKind says why a branch runs.
type BranchKind string

// The branch kinds.
const (
	BranchThen     BranchKind = "then"
	BranchElse     BranchKind = "else"
	BranchCase     BranchKind = "case"
	BranchForeach  BranchKind = "foreach"
	BranchMap      BranchKind = "map"
	BranchParallel BranchKind = "parallel"
	BranchWorkflow BranchKind = "workflow"
)

// sequential branches run one at a time in their parent's stead: a return in them returns from the workflow,
// and their set steps write the workflow's state.
func (k BranchKind) sequential() bool {
	return k == BranchThen || k == BranchElse || k == BranchCase || k == BranchForeach
}

// Branch describes an init_branch.
type Branch struct {
	// Parent is the scope whose step started the branch, Step that step.
	Parent int        `json:"parent"`
	Step   int        `json:"step"`
	Kind   BranchKind `json:"kind"`
	// Index is the case, item or branch number.
	Index int `json:"index"`
	// Body is the task path of the steps the branch runs ("main[2].foreach.do", or a workflow's name).
	Body string `json:"body"`
	// Items are a foreach's or map's items, on the transition that starts its first branch.
	Items []any `json:"items,omitempty"`
	// Tail marks a workflow call made by its caller's last step: the callee replaces the caller.
	Tail bool `json:"tail,omitempty"`
}
