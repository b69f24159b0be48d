package expr

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/internal/pyjson"
	"go.starlark.net/starlark"
	"go.yaml.in/yaml/v3"
)

// yamlBuiltins are yaml (load, safe_load, dump, safe_dump) and Julep's load_yaml and dump_yaml. Mappings keep
// the order they are written in, as Python's dicts do.
func yamlBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"yaml": newModule("yaml", starlark.StringDict{
			"load":      fn("yaml.load", yamlLoad),
			"safe_load": fn("yaml.safe_load", yamlLoad),
			"dump":      fn("yaml.dump", yamlDump),
			"safe_dump": fn("yaml.safe_dump", yamlDump),
		}),
		"load_yaml": fn("load_yaml", yamlLoad),
		"dump_yaml": fn("dump_yaml", yamlDump),
	}
}

func yamlLoad(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	if err := charge(th, len(s)); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if doc.Kind == 0 {
		return starlark.None, nil
	}
	budget := meterOf(th).limits.MaxItems
	return fromYAML(&doc, &budget, 0)
}

// fromYAML converts a YAML node, counting nodes against budget (aliases can multiply a small document).
func fromYAML(n *yaml.Node, budget *int, depth int) (starlark.Value, error) {
	*budget--
	if *budget < 0 || depth > 200 {
		return nil, errors.New("the YAML document is too large or too deep")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		return fromYAML(n.Content[0], budget, depth+1)
	case yaml.AliasNode:
		return fromYAML(n.Alias, budget, depth+1)
	case yaml.SequenceNode:
		elems := make([]starlark.Value, len(n.Content))
		for i, c := range n.Content {
			v, err := fromYAML(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = v
		}
		return starlark.NewList(elems), nil
	case yaml.MappingNode:
		d := starlark.NewDict(len(n.Content) / 2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := fromYAML(n.Content[i], budget, depth+1)
			if err != nil {
				return nil, err
			}
			v, err := fromYAML(n.Content[i+1], budget, depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(k, v); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	if t, ok := v.(interface{ Format(string) string }); ok {
		return starlark.String(t.Format("2006-01-02T15:04:05Z07:00")), nil
	}
	return ToStarlark(v)
}

// yamlDump writes a value as PyYAML's dump does by default: block style, keys sorted unless
// sort_keys=False, lists not indented under their key.
func yamlDump(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	sortKeys := true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &v, "sort_keys?", &sortKeys,
		"default_flow_style?", new(starlark.Value), "allow_unicode?", new(starlark.Value), "indent?", new(starlark.Value)); err != nil {
		return nil, err
	}
	if err := checkPrint(th, v); err != nil {
		return nil, err
	}
	budget := meterOf(th).limits.MaxItems
	n, err := toYAML(v, sortKeys, &budget)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.String(out.String()), nil
}

func toYAML(v starlark.Value, sortKeys bool, budget *int) (*yaml.Node, error) {
	g, err := toOrdered(v, budget)
	if err != nil {
		return nil, err
	}
	return orderedNode(g, sortKeys)
}

func orderedNode(g any, sortKeys bool) (*yaml.Node, error) {
	switch x := g.(type) {
	case pyjson.Object:
		if sortKeys {
			x = slices.Clone(x)
			sort.SliceStable(x, func(i, j int) bool { return x[i].Key < x[j].Key })
		}
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, m := range x {
			v, err := orderedNode(m.Value, sortKeys)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m.Key}, v)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			v, err := orderedNode(e, sortKeys)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		return n, nil
	}
	n := &yaml.Node{}
	if err := n.Encode(g); err != nil {
		return nil, err
	}
	return n, nil
}
