package workflow

import (
	"fmt"

	"github.com/contrailhq/contrail/internal/expr"
)

// Steps that start branches: conditions, loops, map_reduce, parallel and workflows. Each kind of step decides its
// frame in its own method (stepDecider).

func (st *IfElseStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	cond, err := st.If.Eval(dc.exprEnv(f, "if", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".if", err)}, nil, nil
	}
	if expr.Truthy(cond) {
		return []Transition{dc.startBranch(f, BranchThen, 0, path+".then", path+".then", f.Current, nil)}, nil, nil
	}
	if st.Else == nil {
		return dc.complete(f, TypeStep, f.Current, nil), nil, nil
	}
	return []Transition{dc.startBranch(f, BranchElse, 0, path+".else", path+".else", f.Current, nil)}, nil, nil
}

func (st *SwitchStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	for i, c := range st.Cases {
		if c.Case != nil {
			v, err := c.Case.Eval(dc.exprEnv(f, fmt.Sprintf("case%d", i), nil))
			if err != nil {
				return []Transition{dc.failErr(f, fmt.Sprintf("%s.switch[%d].case", path, i), err)}, nil, nil
			}
			if !expr.Truthy(v) {
				continue
			}
		}
		body := fmt.Sprintf("%s.switch[%d].then", path, i)
		return []Transition{dc.startBranch(f, BranchCase, i, body, body, f.Current, nil)}, nil, nil
	}
	return []Transition{dc.fail(f, path+".switch", "no case matched (add a default case: case: _)")}, nil, nil
}

func (st *ForeachStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	items, tr := dc.items(f, st.In, path+".foreach.in")
	if tr != nil {
		return []Transition{*tr}, nil, nil
	}
	if len(items) == 0 {
		return dc.complete(f, TypeStep, []any{}, nil), nil, nil
	}
	return []Transition{dc.startBranch(f, BranchForeach, 0, path+".foreach.do", path+".foreach[0]", items[0], items)}, nil, nil
}

func (st *MapReduceStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	items, tr := dc.items(f, st.Over, path+".over")
	if tr != nil {
		return []Transition{*tr}, nil, nil
	}
	if len(items) == 0 {
		init, err := st.Initial.Eval(dc.ctx, dc.exprEnv(f, "initial", nil))
		if err != nil {
			return []Transition{dc.failErr(f, path+".initial", err)}, nil, nil
		}
		return dc.complete(f, TypeStep, init, nil), nil, nil
	}
	var trs []Transition
	for i := 0; i < min(st.Parallelism, len(items)); i++ {
		var withItems []any
		if i == 0 {
			withItems = items
		}
		trs = append(trs, dc.startBranch(f, BranchMap, i, path+".map", fmt.Sprintf("%s.map[%d]", path, i), items[i], withItems))
	}
	return trs, nil, nil
}

func (st *ParallelStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	var trs []Transition
	for i := range st.Branches {
		body := fmt.Sprintf("%s.parallel[%d]", path, i)
		trs = append(trs, dc.startBranch(f, BranchParallel, i, body, body, f.Current, nil))
	}
	return trs, nil, nil
}

func (st *YieldStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	args, err := st.Arguments.Eval(dc.ctx, dc.exprEnv(f, "arguments", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".arguments", err)}, nil, nil
	}
	tail := f.Workflow && f.Step == len(steps)-1
	if !tail && f.Depth+1 > dc.lim.MaxDepth {
		return []Transition{dc.fail(f, path, fmt.Sprintf("workflows nested more than %d deep", dc.lim.MaxDepth))}, nil, nil
	}
	tr := dc.startBranch(f, BranchWorkflow, 0, st.Workflow, st.Workflow, args, nil)
	tr.Branch.Tail = tail
	return []Transition{tr}, nil, nil
}
