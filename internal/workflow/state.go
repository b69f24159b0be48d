package workflow

import (
	"fmt"
	"maps"
	"sort"
	"time"
)

// State is where an execution is: a fold of its transitions.
type State struct {
	Status Status `json:"status"`
	// Frames are the runs of steps under way: the main workflow (or the workflow that replaced it), called
	// workflows and branches, by scope.
	Frames map[int]*Frame `json:"frames"`
	// NextScope numbers the next frame.
	NextScope int `json:"next_scope"`
	// Output is the execution's output once it succeeded; Error its error once it failed.
	Output any    `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Transitions counts the transitions folded; Last is the type of the last one.
	Transitions int            `json:"transitions"`
	Last        TransitionType `json:"last,omitempty"`
	// WaitSeq orders waits, so that Resume answers the oldest.
	WaitSeq int `json:"wait_seq"`
	// At is the time of the last transition.
	At time.Time `json:"at"`
}

// Frame is one run of a list of steps: a workflow's or a branch's.
type Frame struct {
	Scope int    `json:"scope"`
	Name  string `json:"name"`
	// Body is the task path of the steps.
	Body string `json:"body"`
	// Workflow marks a named workflow's frame (main or called): it keeps the steps' inputs and outputs that
	// expressions see, and its state.
	Workflow bool `json:"workflow,omitempty"`
	// Parent is the scope of the frame whose step started this one (-1 for the root), at ParentStep.
	Parent     int        `json:"parent"`
	ParentStep int        `json:"parent_step"`
	Kind       BranchKind `json:"kind,omitempty"`
	Index      int        `json:"index"`
	// Home is the scope of the workflow frame whose steps expressions see; Owner the scope of the frame whose
	// state they read and set (the workflow's, or a parallel branch's own).
	Home  int `json:"home"`
	Owner int `json:"owner"`
	Depth int `json:"depth"`
	// Step is the step being run (len(steps) once they are all done).
	Step int `json:"step"`
	// Input is what the frame was started with (inputs[0]); Current is `_`, the running step's input.
	Input   any   `json:"input"`
	Current any   `json:"current"`
	Outputs []any `json:"outputs,omitempty"`
	// State is the frame's state when it owns one.
	State map[string]any `json:"state,omitempty"`
	// Since is when the running step started (a sleep counts from it).
	Since time.Time `json:"since"`
	// Waiting is set while the step waits for a client's input.
	Waiting *Waiting `json:"waiting,omitempty"`
	// Pending follows the branches the running step started.
	Pending *Pending `json:"pending,omitempty"`
	// Last is the type of the last transition of this scope.
	Last TransitionType `json:"last,omitempty"`
}

// Waiting is a step waiting for input.
type Waiting struct {
	Seq  int `json:"seq"`
	Info any `json:"info"`
}

// Pending follows the branches of a running if, switch, foreach, map-reduce, parallel or workflow call.
type Pending struct {
	Kind BranchKind `json:"kind"`
	// Items are a foreach's or map's items; Count the number of branches in all.
	Items []any `json:"items,omitempty"`
	Count int   `json:"count"`
	// Started and Finished count branches; Running lists the scopes of those under way by branch index.
	Started  int         `json:"started"`
	Finished int         `json:"finished"`
	Running  map[int]int `json:"running,omitempty"`
	Results  []any       `json:"results,omitempty"`
	// Returned is set when a sequential branch ended with a return step: the step's frame ends with it.
	Returned    bool `json:"returned,omitempty"`
	ReturnValue any  `json:"return_value,omitempty"`
}

// Fold rebuilds an execution's state from its transitions.
func Fold(t *Task, trs []Transition) (*State, error) {
	s := &State{Status: StatusQueued, Frames: map[int]*Frame{}}
	for i, tr := range trs {
		if err := Apply(t, s, tr); err != nil {
			return nil, fmt.Errorf("transition %d: %w", i, err)
		}
	}
	return s, nil
}

// NewState is the state of an execution with no transition yet.
func NewState() *State { return &State{Status: StatusQueued, Frames: map[int]*Frame{}} }

// Clone returns a deep enough copy of s for Apply to change without touching s.
func (s *State) Clone() *State {
	c := *s
	c.Frames = make(map[int]*Frame, len(s.Frames))
	for k, f := range s.Frames {
		fc := *f
		fc.Outputs = append([]any(nil), f.Outputs...)
		fc.State = maps.Clone(f.State)
		if f.Pending != nil {
			p := *f.Pending
			p.Running = maps.Clone(f.Pending.Running)
			p.Results = append([]any(nil), f.Pending.Results...)
			fc.Pending = &p
		}
		if f.Waiting != nil {
			w := *f.Waiting
			fc.Waiting = &w
		}
		c.Frames[k] = &fc
	}
	return &c
}

// scopes lists the frames' scopes in order.
func (s *State) scopes() []int {
	keys := make([]int, 0, len(s.Frames))
	for k := range s.Frames {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// Apply folds one transition into s. A transition that does not fit where the execution is (a stale
// decision, a corrupted log) is refused and s is left as it was.
func Apply(t *Task, s *State, tr Transition) error {
	if s.Frames == nil {
		s.Frames = map[int]*Frame{}
	}
	if s.Last.Terminal() {
		return fmt.Errorf("the execution has ended (%s); %s cannot follow", s.Last, tr.Type)
	}
	f := s.Frames[tr.Current.Scope]
	prev := TransitionType("")
	if f != nil {
		prev = f.Last
	}
	if tr.Type == TypeInit || tr.Type == TypeInitBranch {
		if f != nil {
			return fmt.Errorf("%s: scope %d already exists", tr.Type, tr.Current.Scope)
		}
	} else if f == nil && tr.Type != TypeError && tr.Type != TypeCancelled {
		return fmt.Errorf("%s: no scope %d under way", tr.Type, tr.Current.Scope)
	}
	if !CanFollow(prev, tr.Type) {
		return fmt.Errorf("%s cannot follow %q in scope %d", tr.Type, prev, tr.Current.Scope)
	}
	if tr.Type == TypeInit && s.Transitions > 0 {
		return fmt.Errorf("init must be the first transition")
	}
	var err error
	switch tr.Type {
	case TypeInit:
		err = applyInit(t, s, tr)
	case TypeInitBranch:
		err = applyInitBranch(t, s, tr)
	case TypeStep:
		err = completeStep(t, s, f, tr)
	case TypeWait:
		if tr.Current.Step != f.Step || f.Waiting != nil {
			return fmt.Errorf("wait: scope %d is at step %d", f.Scope, f.Step)
		}
		s.WaitSeq++
		f.Waiting = &Waiting{Seq: s.WaitSeq, Info: tr.Output}
	case TypeResume:
		if f.Waiting == nil || tr.Current.Step != f.Step {
			return fmt.Errorf("resume: scope %d is not waiting at step %d", f.Scope, tr.Current.Step)
		}
		f.Waiting = nil
		err = completeStep(t, s, f, tr)
	case TypeFinishBranch, TypeFinish:
		err = applyFinish(t, s, f, tr)
	case TypeError:
		s.Error = fmt.Sprint(tr.Output)
		if str, ok := tr.Output.(string); ok {
			s.Error = str
		}
	case TypeCancelled:
	default:
		return fmt.Errorf("unknown transition type %q", tr.Type)
	}
	if err != nil {
		return err
	}
	if f := s.Frames[tr.Current.Scope]; f != nil {
		f.Last = tr.Type
	}
	s.Transitions++
	s.Last = tr.Type
	s.At = tr.At
	s.Status = s.status()
	if tr.Type.Terminal() {
		s.Frames = map[int]*Frame{}
	}
	return nil
}

func (s *State) status() Status {
	if s.Last.Terminal() || s.Last == TypeInit || s.Last == "" {
		return StatusOf(s.Last)
	}
	// Awaiting input when some step waits and nothing else can go on.
	waiting, runnable := false, false
	for _, f := range s.Frames {
		switch {
		case f.Waiting != nil:
			waiting = true
		case f.Pending == nil:
			runnable = true
		}
	}
	if waiting && !runnable {
		return StatusAwaitingInput
	}
	return StatusRunning
}

func applyInit(t *Task, s *State, tr Transition) error {
	if tr.Current.Workflow != "main" || tr.Current.Step != 0 {
		return fmt.Errorf("init starts main at step 0")
	}
	if _, ok := t.Workflows["main"]; !ok {
		return fmt.Errorf("the task has no main workflow")
	}
	s.Frames[tr.Current.Scope] = &Frame{
		Scope: tr.Current.Scope, Name: "main", Body: "main", Workflow: true, Parent: -1,
		Home: tr.Current.Scope, Owner: tr.Current.Scope, Input: tr.Output, Current: tr.Output,
		State: map[string]any{}, Since: tr.At,
	}
	s.NextScope = max(s.NextScope, tr.Current.Scope+1)
	return nil
}

func applyInitBranch(t *Task, s *State, tr Transition) error {
	b := tr.Branch
	if b == nil {
		return fmt.Errorf("init_branch without its branch")
	}
	if _, ok := t.lists[b.Body]; !ok {
		return fmt.Errorf("init_branch: the task has no steps at %q", b.Body)
	}
	parent := s.Frames[b.Parent]
	if parent == nil {
		return fmt.Errorf("init_branch: no scope %d under way", b.Parent)
	}
	if parent.Step != b.Step {
		return fmt.Errorf("init_branch: scope %d is at step %d, not %d", b.Parent, parent.Step, b.Step)
	}
	f := &Frame{
		Scope: tr.Current.Scope, Name: tr.Current.Workflow, Body: b.Body, Parent: b.Parent, ParentStep: b.Step,
		Kind: b.Kind, Index: b.Index, Input: tr.Output, Current: tr.Output, Since: tr.At,
		Home: parent.Home, Owner: parent.Owner, Depth: parent.Depth,
	}
	switch b.Kind {
	case BranchWorkflow:
		f.Workflow, f.Home, f.Owner, f.Depth = true, f.Scope, f.Scope, parent.Depth+1
		// A called workflow starts with a copy of its caller's state; what it sets stays its own.
		f.State = maps.Clone(s.Frames[parent.Owner].State)
		if f.State == nil {
			f.State = map[string]any{}
		}
	case BranchMap, BranchParallel:
		// Parallel branches read the state as it was when they started and set their own copy of it.
		f.Owner = f.Scope
		f.State = maps.Clone(s.Frames[parent.Owner].State)
		if f.State == nil {
			f.State = map[string]any{}
		}
	}
	if b.Tail {
		if !parent.Workflow {
			return fmt.Errorf("init_branch: only a workflow's last step replaces it")
		}
		// The callee takes the place of its caller, which had nothing left to do.
		f.Parent, f.ParentStep, f.Kind, f.Index, f.Depth = parent.Parent, parent.ParentStep, parent.Kind, parent.Index, parent.Depth
		if pp := s.Frames[parent.Parent]; pp != nil && pp.Pending != nil {
			pp.Pending.Running[parent.Index] = f.Scope
		}
		delete(s.Frames, parent.Scope)
		s.Frames[f.Scope] = f
		s.NextScope = max(s.NextScope, f.Scope+1)
		return nil
	}
	p := parent.Pending
	if p == nil {
		p = &Pending{Kind: b.Kind, Count: 1, Running: map[int]int{}}
		switch b.Kind {
		case BranchForeach, BranchMap:
			p.Items = b.Items
			p.Count = len(b.Items)
		case BranchParallel:
			steps, _ := t.Steps(parent.Body)
			if ps, ok := steps[parent.Step].(*ParallelStep); ok {
				p.Count = len(ps.Branches)
			}
		}
		p.Results = make([]any, p.Count)
		parent.Pending = p
	}
	// One-branch steps (if, switch, a workflow call) keep their branch in slot 0, whichever case it is.
	if b.Kind != BranchForeach && b.Kind != BranchMap && b.Kind != BranchParallel {
		f.Index = 0
	}
	if _, running := p.Running[f.Index]; running || f.Index >= p.Count {
		return fmt.Errorf("init_branch: branch %d of scope %d already started or out of range", b.Index, b.Parent)
	}
	p.Running[f.Index] = f.Scope
	p.Started++
	s.Frames[f.Scope] = f
	s.NextScope = max(s.NextScope, f.Scope+1)
	return nil
}

// completeStep records the output of frame f's running step and moves to the next.
func completeStep(t *Task, s *State, f *Frame, tr Transition) error {
	if tr.Current.Step != f.Step {
		return fmt.Errorf("%s: scope %d is at step %d, not %d", tr.Type, f.Scope, f.Step, tr.Current.Step)
	}
	steps, ok := t.Steps(f.Body)
	if !ok || f.Step >= len(steps) {
		return fmt.Errorf("%s: scope %d has no step %d", tr.Type, f.Scope, f.Step)
	}
	if set, ok := steps[f.Step].(*SetStep); ok && set != nil {
		if m, ok := tr.Output.(map[string]any); ok {
			owner := s.Frames[f.Owner]
			if owner.State == nil {
				owner.State = map[string]any{}
			}
			maps.Copy(owner.State, m)
		}
	}
	if f.Workflow {
		f.Outputs = append(f.Outputs, tr.Output)
	}
	f.Current = tr.Output
	f.Step++
	f.Pending = nil
	f.Since = tr.At
	return nil
}

func applyFinish(t *Task, s *State, f *Frame, tr Transition) error {
	steps, _ := t.Steps(f.Body)
	if !tr.Returned && !endsEarly(steps, f) && f.Step < len(steps) {
		// The last step's completion is the frame's finish (Julep records no step transition for it).
		if tr.Current.Step != len(steps)-1 || f.Step != len(steps)-1 {
			return fmt.Errorf("%s: scope %d is at step %d of %d", tr.Type, f.Scope, f.Step, len(steps))
		}
		if err := completeStep(t, s, f, tr); err != nil {
			return err
		}
	}
	if tr.Type == TypeFinish {
		if f.Parent != -1 {
			return fmt.Errorf("finish: scope %d is a branch", f.Scope)
		}
		s.Output = tr.Output
		return nil
	}
	if f.Parent == -1 {
		return fmt.Errorf("finish_branch: scope %d is the main workflow", f.Scope)
	}
	parent := s.Frames[f.Parent]
	if parent == nil || parent.Pending == nil {
		return fmt.Errorf("finish_branch: scope %d has no parent step waiting for it", f.Scope)
	}
	p := parent.Pending
	if p.Running[f.Index] != f.Scope {
		return fmt.Errorf("finish_branch: scope %d is not branch %d of scope %d", f.Scope, f.Index, parent.Scope)
	}
	delete(p.Running, f.Index)
	p.Results[f.Index] = tr.Output
	p.Finished++
	if tr.Returned && f.Kind.sequential() && !f.Workflow {
		p.Returned, p.ReturnValue = true, tr.Output
	}
	delete(s.Frames, f.Scope)
	// The finished frame's scope takes no more transitions; its Last is gone with it.
	return nil
}

// endsEarly reports whether frame f may finish before its last step: its running step returns, or a branch
// it started returned.
func endsEarly(steps []Step, f *Frame) bool {
	if f.Pending != nil && f.Pending.Returned {
		return true
	}
	if f.Step < len(steps) {
		_, ok := steps[f.Step].(*ReturnStep)
		return ok
	}
	return false
}
