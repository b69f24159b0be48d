package expr

import (
	"errors"
	"fmt"
	"time"

	"go.starlark.net/starlark"
)

type builtinFunc = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

// method returns a datetime's or date's method, or nil.
func (d *pyTime) method(name string) builtinFunc {
	switch name {
	case "isoformat":
		return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			sep, timespec := "T", "auto"
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "sep?", &sep, "timespec?", &timespec); err != nil {
				return nil, err
			}
			return starlark.String(d.isoformat(sep, timespec)), nil
		}
	case "strftime":
		return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var format string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &format); err != nil {
				return nil, err
			}
			s, err := strftime(d.t, d.aware, format)
			return starlark.String(s), err
		}
	case "weekday", "isoweekday", "timestamp", "date":
		return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			return d.simple(name), nil
		}
	case "replace":
		return d.replace
	case "astimezone":
		return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var tz starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tz?", &tz); err != nil {
				return nil, err
			}
			loc, err := location(tz)
			if err != nil || loc == nil {
				loc = time.UTC
			}
			return &pyTime{t: d.t.In(loc), aware: true}, err
		}
	}
	return nil
}

func (d *pyTime) simple(name string) starlark.Value {
	wd := (int(d.t.Weekday()) + 6) % 7
	switch name {
	case "weekday":
		return starlark.MakeInt(wd)
	case "isoweekday":
		return starlark.MakeInt(wd + 1)
	case "timestamp":
		return starlark.Float(float64(d.t.UnixMicro()) / 1e6)
	}
	y, m, day := d.t.Date()
	return &pyTime{t: time.Date(y, m, day, 0, 0, 0, 0, time.UTC), date: true}
}

// replace is replace(year=, month=, day=, hour=, minute=, second=, microsecond=, tzinfo=).
func (d *pyTime) replace(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, errors.New("replace() takes keyword arguments only")
	}
	t := d.t
	f := map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day(), "hour": t.Hour(),
		"minute": t.Minute(), "second": t.Second(), "microsecond": t.Nanosecond() / 1000}
	loc, aware := t.Location(), d.aware
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		if k == "tzinfo" && !d.date {
			l, err := location(kv[1])
			if err != nil {
				return nil, err
			}
			loc, aware = l, l != nil
			if l == nil {
				loc = time.UTC
			}
			continue
		}
		if _, ok := f[k]; !ok || d.date && k != "year" && k != "month" && k != "day" {
			return nil, fmt.Errorf("replace() got an unexpected keyword argument %q", k)
		}
		n, err := starlark.AsInt32(kv[1])
		if err != nil {
			return nil, fmt.Errorf("replace(): %s: %w", k, err)
		}
		f[k] = n
	}
	return makeTime(f["year"], f["month"], f["day"], f["hour"], f["minute"], f["second"], f["microsecond"], loc, aware, d.date)
}

// makeTime builds a datetime or date from its fields, refusing those out of range as Python does.
func makeTime(y, mo, d, h, mi, s, us int, loc *time.Location, aware, date bool) (*pyTime, error) {
	switch {
	case y < 1 || y > 9999:
		return nil, fmt.Errorf("year %d is out of range", y)
	case mo < 1 || mo > 12:
		return nil, errors.New("month must be in 1..12")
	case d < 1 || d > time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day():
		return nil, errors.New("day is out of range for month")
	case h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || us < 0 || us > 999_999:
		return nil, errors.New("hour, minute, second or microsecond out of range")
	}
	return &pyTime{t: time.Date(y, time.Month(mo), d, h, mi, s, us*1000, loc), aware: aware, date: date}, nil
}
