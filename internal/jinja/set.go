package jinja

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Set is Jinja's set tag. gonja's own keeps its expressions in unexported fields, out of reach of the guard's
// rewrite; this one has the same forms ({% set x = e %}, {% set x = e if c else a %}, {% set ns.x = e %},
// {% set x %}...{% endset %}) and checks the size of what it stores.
type Set struct {
	Location    *tokens.Token
	Target      nodes.Expression
	Expression  nodes.Expression
	Condition   nodes.Expression
	Alternative nodes.Expression
	Body        *nodes.Wrapper
}

// Position implements nodes.Node.
func (s *Set) Position() *tokens.Token { return s.Location }

func (s *Set) String() string {
	return fmt.Sprintf("Set(Line=%d Col=%d)", s.Location.Line, s.Location.Col)
}

// Execute implements exec.ControlStructure.
func (s *Set) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	var value *exec.Value
	switch {
	case s.Body != nil:
		var buf bytes.Buffer
		sub := r.Inherit()
		sub.Output = &limitedWriter{w: &buf, g: guardOf(r.Evaluator())}
		if err := sub.ExecuteWrapper(s.Body); err != nil {
			return err
		}
		value = exec.AsSafeValue(buf.String())
	case s.Condition != nil:
		c := r.Eval(s.Condition)
		if c.IsError() {
			return c
		}
		if !c.IsNil() && c.IsTrue() {
			value = r.Eval(s.Expression)
		} else {
			value = r.Eval(s.Alternative)
		}
	default:
		value = r.Eval(s.Expression)
	}
	if value.IsError() {
		return value
	}
	if err := guardOf(r.Evaluator()).checkSize("the value set", value.Interface()); err != nil {
		return err
	}
	switch n := s.Target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(n.Name.Val, value.Interface())
	case *nodes.GetAttribute:
		target := r.Eval(n.Node)
		if target.IsError() {
			return target
		}
		if err := target.Set(exec.AsValue(n.Attribute), value.Interface()); err != nil {
			return fmt.Errorf("set %s: %w", n, err)
		}
	case *nodes.GetItem:
		target := r.Eval(n.Node)
		if target.IsError() {
			return target
		}
		key := r.Eval(n.Arg)
		if key.IsError() {
			return key
		}
		if err := target.Set(key, value.Interface()); err != nil {
			return fmt.Errorf("set %s: %w", n, err)
		}
	default:
		return fmt.Errorf("cannot set %s", n)
	}
	return nil
}

func setParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &Set{Location: p.Current()}
	target, err := args.ParseVariableOrLiteral()
	if err != nil {
		return nil, err
	}
	switch target.(type) {
	case *nodes.Name, *nodes.GetItem, *nodes.GetAttribute:
		s.Target = target
	default:
		return nil, args.Error(fmt.Sprintf("cannot set %s", target), args.Current())
	}
	if args.Match(tokens.Assign) == nil {
		if !args.End() {
			return nil, args.Error("expected '=' or the end of the set tag", args.Current())
		}
		body, endArgs, err := p.WrapUntil("endset")
		if err != nil {
			return nil, err
		}
		if !endArgs.End() {
			return nil, errors.New("endset takes no arguments")
		}
		s.Body = body
		return s, nil
	}
	if s.Expression, err = args.ParseExpression(); err != nil {
		return nil, err
	}
	cond, alt, err := args.ParseCondition()
	if err != nil {
		return nil, err
	}
	if cond != nil {
		if alt == nil {
			return nil, args.Error("a conditional set needs an else", args.Current())
		}
		s.Condition, s.Alternative = cond, alt
	}
	if !args.End() {
		return nil, args.Error("unexpected text at the end of the set tag", args.Current())
	}
	return s, nil
}
