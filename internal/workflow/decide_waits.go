package workflow

import (
	"fmt"
	"time"

	"github.com/contrailhq/contrail/internal/expr"
)

// Steps that wait: for input, or for a timer. Each kind of step decides its frame in its own method (stepDecider).

func (st *WaitForInputStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	info, err := st.Info.Eval(dc.ctx, dc.exprEnv(f, "wait_for_input", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".wait_for_input.info", err)}, nil, nil
	}
	return []Transition{dc.transition(f, TypeWait, info)}, nil, nil
}

func (st *SleepStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	d := st.Duration
	if st.Seconds != nil {
		v, err := st.Seconds.Eval(dc.ctx, dc.exprEnv(f, "sleep", nil))
		if err != nil {
			return []Transition{dc.failErr(f, path+".sleep", err)}, nil, nil
		}
		secs, ok := expr.AsFloat(v)
		if !ok || secs <= 0 || secs > MaxSleep.Seconds() {
			return []Transition{dc.fail(f, path+".sleep", fmt.Sprintf("a sleep lasts more than 0 seconds and at most 31 days, not %v", v))}, nil, nil
		}
		d = time.Duration(secs * float64(time.Second))
	}
	return nil, &Effect{Key: effectKey(f), Kind: EffectTimer, Path: path, Scope: f.Scope, Step: f.Step, Until: f.Since.Add(d)}, nil
}
