package workflow

// Steps that call out: the model, a tool. Each kind of step decides its frame in its own method (stepDecider).

func (st *PromptStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	call, err := dc.modelCall(f, st)
	if err != nil {
		return []Transition{dc.failErr(f, path+".prompt", err)}, nil, nil
	}
	return nil, &Effect{Key: effectKey(f), Kind: EffectModel, Path: path, Scope: f.Scope, Step: f.Step, Model: call}, nil
}

func (st *ToolCallStep) decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error) {
	return dc.toolCall(f, st)
}
