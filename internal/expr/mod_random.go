package expr

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"go.starlark.net/starlark"
)

// randomBuiltins are random (and seed 004's randint), drawn from the evaluation's seed so that a replayed
// step draws the same numbers.
func randomBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"randint": fn("randint", randintBuiltin),
		"random": newModule("random", starlark.StringDict{
			"random":  fn("random.random", randomBuiltin),
			"randint": fn("random.randint", randintBuiltin),
			"uniform": fn("random.uniform", uniformBuiltin),
			"choice":  fn("random.choice", choiceBuiltin),
			"sample":  fn("random.sample", sampleBuiltin),
			"shuffle": fn("random.shuffle", shuffleBuiltin),
		}),
	}
}

func rng(th *starlark.Thread) *rand.Rand {
	if r, ok := th.Local(randKey).(*rand.Rand); ok {
		return r
	}
	seed, _ := th.Local(seedKey).(uint64)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	th.SetLocal(randKey, r)
	return r
}

// randintBuiltin is randint(n) in [0, n) (seed 004's `randint(len(...))` indexes a list) and randint(a, b) in
// [a, b] as Python's random.randint.
func randintBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var lo, hi int64
	var hiV starlark.Value
	var loV starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &loV, &hiV); err != nil {
		return nil, err
	}
	l, ok := loV.(starlark.Int)
	if !ok {
		return nil, fmt.Errorf("%s: want an int, got %s", b.Name(), loV.Type())
	}
	lo, _ = l.Int64()
	if hiV == nil {
		if b.Name() == "random.randint" {
			return nil, errors.New("random.randint takes two arguments: a and b")
		}
		lo, hi = 0, lo-1
	} else {
		h, ok := hiV.(starlark.Int)
		if !ok {
			return nil, fmt.Errorf("%s: want an int, got %s", b.Name(), hiV.Type())
		}
		hi, _ = h.Int64()
	}
	if hi < lo {
		return nil, fmt.Errorf("%s: empty range [%d, %d]", b.Name(), lo, hi)
	}
	return starlark.MakeInt64(lo + rng(th).Int64N(hi-lo+1)), nil
}

func randomBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.Float(rng(th).Float64()), nil
}

func uniformBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, c starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &a, &c); err != nil {
		return nil, err
	}
	af, ok1 := starlark.AsFloat(a)
	cf, ok2 := starlark.AsFloat(c)
	if !ok1 || !ok2 {
		return nil, errors.New("random.uniform takes two numbers")
	}
	return starlark.Float(af + (cf-af)*rng(th).Float64()), nil
}

func choiceBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Indexable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &seq); err != nil {
		return nil, err
	}
	if seq.Len() == 0 {
		return nil, errors.New("random.choice from an empty sequence")
	}
	return seq.Index(rng(th).IntN(seq.Len())), nil
}

func sampleBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Indexable
	var k int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &seq, &k); err != nil {
		return nil, err
	}
	if k < 0 || k > seq.Len() {
		return nil, errors.New("random.sample: sample larger than population or negative")
	}
	if err := charge(th, seq.Len()); err != nil {
		return nil, err
	}
	perm := rng(th).Perm(seq.Len())[:k]
	out := make([]starlark.Value, k)
	for i, p := range perm {
		out[i] = seq.Index(p)
	}
	return starlark.NewList(out), nil
}

func shuffleBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *starlark.List
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &l); err != nil {
		return nil, err
	}
	r := rng(th)
	for i := l.Len() - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		a, c := l.Index(i), l.Index(j)
		if err := l.SetIndex(i, c); err != nil {
			return nil, err
		}
		if err := l.SetIndex(j, a); err != nil {
			return nil, err
		}
	}
	return starlark.None, nil
}
