package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
)

func urllibParse() *module {
	return newModule("urllib.parse", starlark.StringDict{
		"urlparse":     fn("urllib.parse.urlparse", urlParse),
		"urlsplit":     fn("urllib.parse.urlsplit", urlParse),
		"urlencode":    fn("urllib.parse.urlencode", urlEncode),
		"quote":        fn("urllib.parse.quote", urlQuote),
		"quote_plus":   fn("urllib.parse.quote_plus", urlQuote),
		"unquote":      fn("urllib.parse.unquote", urlUnquote),
		"unquote_plus": fn("urllib.parse.unquote_plus", urlUnquote),
		"parse_qs":     fn("urllib.parse.parse_qs", parseQS),
		"parse_qsl":    fn("urllib.parse.parse_qsl", parseQS),
	})
}

// urlParse is urlparse (scheme, netloc, path, params, query, fragment) and urlsplit (without params),
// split as Python splits them; the result is a tuple with those names and hostname and port.
func urlParse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var u string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &u); err != nil {
		return nil, err
	}
	var scheme, netloc, params, query, fragment string
	if i := strings.IndexByte(u, ':'); i > 0 && isScheme(u[:i]) {
		scheme, u = strings.ToLower(u[:i]), u[i+1:]
	}
	if strings.HasPrefix(u, "//") {
		end := strings.IndexAny(u[2:], "/?#")
		if end < 0 {
			end = len(u) - 2
		}
		netloc, u = u[2:2+end], u[2+end:]
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, fragment = u[:i], u[i+1:]
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, query = u[:i], u[i+1:]
	}
	names := []string{"scheme", "netloc", "path", "query", "fragment"}
	values := []string{scheme, netloc, u, query, fragment}
	if b.Name() == "urllib.parse.urlparse" {
		if i := strings.IndexByte(u[strings.LastIndexByte(u, '/')+1:], ';'); i >= 0 {
			at := strings.LastIndexByte(u, '/') + 1 + i
			u, params = u[:at], u[at+1:]
		}
		names = []string{"scheme", "netloc", "path", "params", "query", "fragment"}
		values = []string{scheme, netloc, u, params, query, fragment}
	}
	t := &namedTuple{typ: "ParseResult", names: names, extra: hostPort(netloc)}
	for _, v := range values {
		t.values = append(t.values, starlark.String(v))
	}
	return t, nil
}

func isScheme(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// hostPort is a netloc's hostname (lower-cased, without user or brackets) and port.
func hostPort(netloc string) starlark.StringDict {
	host := netloc[strings.LastIndexByte(netloc, '@')+1:]
	var port starlark.Value = starlark.None
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		if n, err := strconv.Atoi(host[i+1:]); err == nil {
			port = starlark.MakeInt(n)
		}
		host = host[:i]
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	var hv starlark.Value = starlark.None
	if host != "" {
		hv = starlark.String(host)
	}
	return starlark.StringDict{"hostname": hv, "port": port}
}

// urlQuote is quote(s, safe="/") and quote_plus(s, safe=""): every byte but letters, digits, _.-~ and safe
// as %XX; quote_plus writes a space as +.
func urlQuote(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s starlark.Value
	plus := b.Name() == "urllib.parse.quote_plus"
	safe := "/"
	if plus {
		safe = ""
	}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "string", &s, "safe?", &safe); err != nil {
		return nil, err
	}
	return starlark.String(quote(str(s), safe, plus)), nil
}

func quote(s, safe string, plus bool) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~", c) >= 0 ||
			c < 0x80 && strings.IndexByte(safe, c) >= 0:
			out.WriteByte(c)
		case plus && c == ' ':
			out.WriteByte('+')
		default:
			fmt.Fprintf(&out, "%%%02X", c)
		}
	}
	return out.String()
}

func urlUnquote(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	return starlark.String(unquote(s, b.Name() == "urllib.parse.unquote_plus")), nil
}

// unquote decodes %XX (and + with plus); a malformed escape stays as written, as in Python.
func unquote(s string, plus bool) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				out.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		if plus && c == '+' {
			c = ' '
		}
		out.WriteByte(c)
	}
	return strings.ToValidUTF8(out.String(), "\uFFFD")
}

// urlEncode is urlencode(query, doseq=False): pairs from a dict (in its order) or a list of pairs,
// quote_plus'd.
func urlEncode(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var q starlark.Value
	doseq := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "query", &q, "doseq?", &doseq); err != nil {
		return nil, err
	}
	var pairs []starlark.Tuple
	if d, ok := q.(*starlark.Dict); ok {
		pairs = d.Items()
	} else {
		items, err := iterate(th, q, b.Name())
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			t, ok := sequenceOf(it)
			if !ok || t.Len() != 2 {
				return nil, errors.New("urlencode: the query must be a dict or a list of pairs")
			}
			pairs = append(pairs, starlark.Tuple{t.Index(0), t.Index(1)})
		}
	}
	var parts []string
	for _, kv := range pairs {
		k := quote(str(kv[0]), "", true)
		if seq, ok := sequenceOf(kv[1]); ok && doseq {
			for i := 0; i < seq.Len(); i++ {
				parts = append(parts, k+"="+quote(str(seq.Index(i)), "", true))
			}
			continue
		}
		parts = append(parts, k+"="+quote(str(kv[1]), "", true))
	}
	return starlark.String(strings.Join(parts, "&")), nil
}

// parseQS is parse_qs (a dict of lists, in order of first appearance) and parse_qsl (a list of pairs).
func parseQS(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var qs string
	keepBlank := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "qs", &qs, "keep_blank_values?", &keepBlank); err != nil {
		return nil, err
	}
	d := starlark.NewDict(0)
	var pairs []starlark.Value
	for _, field := range strings.Split(qs, "&") {
		if field == "" {
			continue
		}
		k, v, _ := strings.Cut(field, "=")
		if v == "" && !keepBlank {
			continue
		}
		key, val := starlark.String(unquote(k, true)), starlark.String(unquote(v, true))
		pairs = append(pairs, starlark.Tuple{key, val})
		old, found, _ := d.Get(key)
		if !found {
			old = starlark.NewList(nil)
			_ = d.SetKey(key, old)
		}
		_ = old.(*starlark.List).Append(val)
	}
	if b.Name() == "urllib.parse.parse_qsl" {
		return starlark.NewList(pairs), nil
	}
	return d, nil
}
