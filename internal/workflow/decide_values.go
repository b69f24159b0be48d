package workflow

import "github.com/contrailhq/contrail/internal/expr"

// Steps that evaluate an expression and complete, end or fail the frame with it. Each kind of step decides its frame
// in its own method (stepDecider).

func (st *EvaluateStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	out, err := st.Evaluate.Eval(dc.ctx, dc.exprEnv(f, "evaluate", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".evaluate", err)}, nil, nil
	}
	return dc.complete(f, TypeStep, out, nil), nil, nil
}

func (st *SetStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	out, err := st.Set.Eval(dc.ctx, dc.exprEnv(f, "set", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".set", err)}, nil, nil
	}
	return dc.complete(f, TypeStep, out, nil), nil, nil
}

func (st *GetStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	state := map[string]any{}
	if o := dc.s.Frames[f.Owner]; o != nil && o.State != nil {
		state = o.State
	}
	if !st.List {
		return dc.complete(f, TypeStep, state[st.Keys[0]], nil), nil, nil
	}
	out := map[string]any{}
	for _, k := range st.Keys {
		out[k] = state[k]
	}
	return dc.complete(f, TypeStep, out, nil), nil, nil
}

func (st *LogStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	msg, err := st.Log.Eval(dc.ctx, dc.exprEnv(f, "log", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".log", err)}, nil, nil
	}
	return dc.complete(f, TypeStep, f.Current, map[string]any{"log": msg}), nil, nil
}

func (st *ReturnStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	out, err := st.Value.Eval(dc.ctx, dc.exprEnv(f, "return", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".return", err)}, nil, nil
	}
	return dc.end(f, out, true), nil, nil
}

func (st *ErrorStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	msg, err := st.Error.Eval(dc.ctx, dc.exprEnv(f, "error", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".error", err)}, nil, nil
	}
	return []Transition{dc.fail(f, path, expr.String(msg))}, nil, nil
}
