package expr

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The helpers translate writes calls to, for the Python that Starlark lacks or answers differently.

// opBuiltin is x*y, x+y and x%y, charged for the strings and sequences they build.
func opBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	op, x, y := string(args[0].(starlark.String)), args[1], args[2]
	x, y = boolsAsInts(x, y)
	var err error
	var tok syntax.Token
	switch op {
	case "*":
		tok, err = syntax.STAR, chargeRepeat(th, x, y)
	case "+":
		tok, err = syntax.PLUS, chargeConcat(th, x, y)
	case "%":
		tok = syntax.PERCENT
		if s, ok := x.(starlark.String); ok {
			if err := checkPrint(th, y); err != nil {
				return nil, err
			}
			out, err := percentFormat(string(s), y, meterOf(th).limits.MaxBytes)
			return starlark.String(out), err
		}
	default:
		return nil, fmt.Errorf("internal: operator %s", op)
	}
	if err != nil {
		return nil, err
	}
	return starlark.Binary(tok, x, y)
}

// boolsAsInts makes a bool beside a number the int it is in Python (True + 1 is 2).
func boolsAsInts(x, y starlark.Value) (starlark.Value, starlark.Value) {
	bx, xb := x.(starlark.Bool)
	by, yb := y.(starlark.Bool)
	switch {
	case xb && (yb || isNumber(y)):
		x = boolInt(bx)
	}
	switch {
	case yb && (xb || isNumber(x)):
		y = boolInt(by)
	}
	return x, y
}

func boolInt(b starlark.Bool) starlark.Int {
	if b {
		return starlark.MakeInt(1)
	}
	return starlark.MakeInt(0)
}

func isNumber(v starlark.Value) bool {
	switch v.(type) {
	case starlark.Int, starlark.Float, starlark.Bool:
		return true
	}
	return false
}

func chargeRepeat(th *starlark.Thread, x, y starlark.Value) error {
	seq, n := x, y
	if _, ok := y.(starlark.Int); !ok {
		seq, n = y, x
	}
	k, ok := n.(starlark.Int)
	if !ok {
		return nil
	}
	l, ok := lengthOf(seq)
	if isStringish(seq) {
		l, ok = len(stringOf(seq)), true
	}
	times, _ := k.Int64()
	if !ok || times <= 0 {
		return nil
	}
	if lim := meterOf(th).limits.MaxBytes; int64(l)*times > int64(lim) {
		return fmt.Errorf("repeating a %s %d times would build more than %d elements or bytes", seq.Type(), times, lim)
	}
	return charge(th, int(int64(l)*times))
}

func chargeConcat(th *starlark.Thread, x, y starlark.Value) error {
	if isStringish(x) && isStringish(y) {
		n := len(stringOf(x)) + len(stringOf(y))
		if lim := meterOf(th).limits.MaxBytes; n > lim {
			return fmt.Errorf("the string would be more than %d bytes", lim)
		}
		return charge(th, n)
	}
	a, ok1 := lengthOf(x)
	b, ok2 := lengthOf(y)
	if ok1 && ok2 {
		return charge(th, a+b)
	}
	return nil
}

func isStringish(v starlark.Value) bool {
	switch v.(type) {
	case starlark.String, starlark.Bytes:
		return true
	}
	return false
}

func stringOf(v starlark.Value) string {
	switch x := v.(type) {
	case starlark.String:
		return string(x)
	case starlark.Bytes:
		return string(x)
	}
	return ""
}

// powBuiltin is x ** y and pow(x, y[, mod]) as Python computes them: an int for ints and a non-negative
// exponent, a float otherwise; an error (never a complex number or an infinity) where Python raises one.
func powBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y, mod starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &y, &mod); err != nil {
		return nil, err
	}
	x, y = boolsAsInts(x, y)
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	if mod != nil {
		m, ok := mod.(starlark.Int)
		if !xInt || !yInt || !ok || yi.Sign() < 0 || m.Sign() == 0 {
			return nil, errors.New("pow() with three arguments takes ints, a non-negative exponent and a non-zero modulus")
		}
		r := new(big.Int).Exp(xi.BigInt(), yi.BigInt(), new(big.Int).Abs(m.BigInt()))
		if m.Sign() < 0 && r.Sign() != 0 {
			r.Add(r, m.BigInt())
		}
		return starlark.MakeBigInt(r), nil
	}
	if xInt && yInt && yi.Sign() >= 0 {
		return intPow(th, xi, yi)
	}
	xf, ok1 := starlark.AsFloat(x)
	yf, ok2 := starlark.AsFloat(y)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("unsupported operand types for ** or pow(): %s and %s", x.Type(), y.Type())
	}
	return floatPow(xf, yf)
}

func intPow(th *starlark.Thread, x, y starlark.Int) (starlark.Value, error) {
	e, ok := y.Int64()
	bx := x.BigInt()
	if abs := new(big.Int).Abs(bx); abs.Cmp(big.NewInt(1)) <= 0 {
		// 0, 1 and -1 stay small whatever the exponent.
		if bx.Sign() < 0 && y.BigInt().Bit(0) == 0 {
			return starlark.MakeInt(1), nil
		}
		if bx.Sign() == 0 && y.Sign() == 0 {
			return starlark.MakeInt(1), nil
		}
		return x, nil
	}
	limit := int64(meterOf(th).limits.MaxBytes)
	if !ok || int64(bx.BitLen())*e > limit {
		return nil, fmt.Errorf("%s ** %s would be an integer of more than %d bits", x, y, limit)
	}
	if err := charge(th, int(int64(bx.BitLen())*e/64)); err != nil {
		return nil, err
	}
	return starlark.MakeBigInt(new(big.Int).Exp(bx, big.NewInt(e), nil)), nil
}

func floatPow(x, y float64) (starlark.Value, error) {
	switch {
	case x == 0 && y < 0:
		return nil, errors.New("0.0 cannot be raised to a negative power")
	case x < 0 && y != math.Trunc(y):
		return nil, errors.New("a negative number raised to a fractional power is a complex number, which expressions do not support")
	}
	r := math.Pow(x, y)
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return nil, errors.New("the result of ** is too large for a float")
	}
	return starlark.Float(r), nil
}

// chainBuiltin is a chained comparison: __chain__(a, op1, lambda: b, op2, lambda: c, ...) is
// a op1 b and b op2 c, with b computed once and c only when needed.
func chainBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	left := args[0]
	for i := 1; i+1 < len(args); i += 2 {
		op := string(args[i].(starlark.String))
		right, err := starlark.Call(th, args[i+1], nil, nil)
		if err != nil {
			return nil, err
		}
		ok, err := compareOp(th, op, left, right)
		if err != nil || !ok {
			return starlark.False, err
		}
		left = right
	}
	return starlark.True, nil
}

// cmpBuiltin is __cmp__(op, x, y) for ==, !=, in, not in, is and is not.
func cmpBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	ok, err := compareOp(th, string(args[0].(starlark.String)), args[1], args[2])
	return starlark.Bool(ok), err
}

func compareOp(th *starlark.Thread, op string, x, y starlark.Value) (bool, error) {
	switch op {
	case "==", "!=":
		eq, err := pyEqual(x, y, 0)
		return eq == (op == "=="), err
	case "in", "not in":
		in, err := contains(th, y, x)
		return in == (op == "in"), err
	case "is", "is not":
		same, err := identical(x, y)
		return same == (op == "is"), err
	case "<":
		return starlark.Compare(syntax.LT, x, y)
	case ">":
		return starlark.Compare(syntax.GT, x, y)
	case "<=":
		return starlark.Compare(syntax.LE, x, y)
	case ">=":
		return starlark.Compare(syntax.GE, x, y)
	}
	return false, fmt.Errorf("internal: comparison %s", op)
}
