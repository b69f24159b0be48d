// Package workflow holds Julep's task language and a pure stepper for its executions.
//
// Parse reads a task (JSON from the SDKs, YAML from people) into typed steps, compiling every expression and
// template, so that a task that would fail on its structure is refused when it is created, with the path of
// the step at fault ("main[3].foreach.do").
//
// An execution is a fold of transitions (Julep's init, step, wait, resume, init_branch, finish_branch, finish,
// error, cancelled): Apply folds one into a State, Fold rebuilds a State from the list. The stepper decides
// what comes next from a State, without I/O:
//
//   - Start gives the init transition for an input (validated against the task's input_schema).
//   - Decide gives the transitions that can be recorded now (evaluate, if, switch, log, get, set, return,
//     error, the start and end of branches, a wait for input) and the effects the engine must perform
//     (a model call for a prompt, a tool call, a timer for a sleep), each with a key.
//   - Complete turns an effect's result into transitions; Resume turns a client's input into the resume of
//     the waiting step; Cancel gives the cancelled transition.
//
// The engine records each transition as an event, folds it, and calls Decide again. State is JSON and is
// rebuilt exactly by Fold, so an engine may keep it in memory, load it from a read model, or fold the
// execution's events after a restart. Decisions depend only on the task, the state and Env (the execution's
// id seeds randomness; Env.Now stamps new transitions; a sleep's timer is computed from recorded times), so a
// replay decides the same things.
//
// It must not import NATS, the event store, the platform or the HTTP faces.
package workflow
