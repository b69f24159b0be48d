package expr

import (
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// textBuiltins are base64, string, csv and urllib.parse, as Julep offers them: base64 takes and gives
// str (Julep's b64encode encodes UTF-8 and decodes the result), csv reads a str.
func textBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"base64": newModule("base64", starlark.StringDict{
			"b64encode":         fn("base64.b64encode", b64),
			"b64decode":         fn("base64.b64decode", b64),
			"urlsafe_b64encode": fn("base64.urlsafe_b64encode", b64),
			"urlsafe_b64decode": fn("base64.urlsafe_b64decode", b64),
		}),
		"string": newModule("string", starlark.StringDict{
			"ascii_letters":   starlark.String("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
			"ascii_lowercase": starlark.String("abcdefghijklmnopqrstuvwxyz"),
			"ascii_uppercase": starlark.String("ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
			"digits":          starlark.String("0123456789"),
			"hexdigits":       starlark.String("0123456789abcdefABCDEF"),
			"octdigits":       starlark.String("01234567"),
			"punctuation":     starlark.String("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
			"whitespace":      starlark.String(" \t\n\r\v\f"),
			"printable":       starlark.String("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\v\f"),
		}),
		"csv": newModule("csv", starlark.StringDict{
			"reader":     fn("csv.reader", csvReader),
			"DictReader": fn("csv.DictReader", csvReader),
		}),
		"urllib": newModule("urllib", starlark.StringDict{"parse": urllibParse()}),
	}
}

func b64(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	if err := charge(th, 2*len(s)); err != nil {
		return nil, err
	}
	enc := base64.StdEncoding
	if strings.HasPrefix(b.Name(), "base64.urlsafe") {
		enc = base64.URLEncoding
	}
	if strings.HasSuffix(b.Name(), "encode") {
		return starlark.String(enc.EncodeToString([]byte(s))), nil
	}
	out, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid base64 string: %v", b.Name(), err)
	}
	if !utf8.Valid(out) {
		return nil, fmt.Errorf("%s: the decoded bytes are not UTF-8 text", b.Name())
	}
	return starlark.String(out), nil
}

// csvReader is csv.reader(data, delimiter=",", quotechar='"', skipinitialspace=False): the rows as lists
// (a list, where Python gives an iterator; list() and for read both the same), and csv.DictReader(data,
// fieldnames=None): the rows as dicts keyed by the header row (or fieldnames).
func csvReader(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var data string
	var fieldnames starlark.Value = starlark.None
	delimiter, quotechar := ",", `"`
	skipSpace := false
	spec := []any{"data", &data, "delimiter?", &delimiter, "quotechar?", &quotechar, "skipinitialspace?", &skipSpace}
	if b.Name() == "csv.DictReader" {
		spec = append(spec[:2], append([]any{"fieldnames?", &fieldnames}, spec[2:]...)...)
	}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, spec...); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(delimiter) != 1 || quotechar != `"` {
		return nil, fmt.Errorf("%s: the delimiter must be one character and the quote character \"", b.Name())
	}
	if err := charge(th, len(data)); err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(data))
	r.Comma, _ = utf8.DecodeRuneInString(delimiter)
	r.FieldsPerRecord, r.LazyQuotes, r.TrimLeadingSpace = -1, true, skipSpace
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		rows = append(rows, rec)
	}
	if b.Name() == "csv.DictReader" {
		return dictRows(rows, fieldnames)
	}
	out := make([]starlark.Value, len(rows))
	for i, row := range rows {
		out[i] = stringList(row)
	}
	return starlark.NewList(out), nil
}

func dictRows(rows [][]string, fieldnames starlark.Value) (starlark.Value, error) {
	var names []string
	if fieldnames == starlark.None {
		if len(rows) == 0 {
			return starlark.NewList(nil), nil
		}
		names, rows = rows[0], rows[1:]
	} else {
		seq, ok := sequenceOf(fieldnames)
		if !ok {
			return nil, fmt.Errorf("csv.DictReader: fieldnames must be a list, not %s", fieldnames.Type())
		}
		for i := 0; i < seq.Len(); i++ {
			names = append(names, str(seq.Index(i)))
		}
	}
	out := make([]starlark.Value, len(rows))
	for i, row := range rows {
		d := starlark.NewDict(len(names))
		for j, n := range names {
			var v starlark.Value = starlark.None // Python's restval
			if j < len(row) {
				v = starlark.String(row[j])
			}
			_ = d.SetKey(starlark.String(n), v)
		}
		if len(row) > len(names) {
			_ = d.SetKey(starlark.None, stringList(row[len(names):])) // Python's restkey
		}
		out[i] = d
	}
	return starlark.NewList(out), nil
}

func stringList(ss []string) *starlark.List {
	elems := make([]starlark.Value, len(ss))
	for i, s := range ss {
		elems[i] = starlark.String(s)
	}
	return starlark.NewList(elems)
}
