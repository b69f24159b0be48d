package expr

import (
	"errors"
	"fmt"
	"time"

	"go.starlark.net/starlark"
)

const nowKey = "contrail.now"

// now is the evaluation's clock (Env.Now), so that a decision reads the time it was made at.
func now(th *starlark.Thread) time.Time {
	if t, ok := th.Local(nowKey).(time.Time); ok && !t.IsZero() {
		return t
	}
	return time.Now()
}

// timeBuiltins are datetime and time, as Julep offers them.
func timeBuiltins() starlark.StringDict {
	dt, date, delta, tz := datetimeClass(), dateClass(), timedeltaClass(), timezoneClass()
	// Julep's datetime.datetime also holds its siblings (datetime.datetime.timedelta, ...).
	dt.members["datetime"], dt.members["date"], dt.members["timedelta"] = dt, date, delta
	return starlark.StringDict{
		"datetime": newModule("datetime", starlark.StringDict{
			"datetime": dt, "date": date, "timedelta": delta, "timezone": tz,
		}),
		"time": newModule("time", starlark.StringDict{
			"time":     fn("time.time", timeTime),
			"strftime": fn("time.strftime", timeStrftime),
			"strptime": fn("time.strptime", timeStrptime),
		}),
	}
}

func timeTime(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.Float(float64(now(th).UnixMicro()) / 1e6), nil
}

// timeStrftime is time.strftime(format, t=now): t is a struct_time or a tuple of its nine fields.
func timeStrftime(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var format string
	var tv starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &format, &tv); err != nil {
		return nil, err
	}
	t := now(th).UTC()
	if tv != nil {
		seq, ok := tv.(starlark.Indexable)
		if !ok || seq.Len() < 6 {
			return nil, errors.New("time.strftime: the time must be a struct_time or a tuple of nine ints")
		}
		var f [6]int
		for i := range f {
			n, err := starlark.AsInt32(seq.Index(i))
			if err != nil {
				return nil, fmt.Errorf("time.strftime: field %d: %w", i, err)
			}
			f[i] = n
		}
		t = time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, time.UTC)
	}
	s, err := strftime(t, false, format)
	if err != nil {
		return nil, err
	}
	return starlark.String(s), nil
}

// timeStrptime is time.strptime(string, format): a struct_time.
func timeStrptime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s, format string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s, &format); err != nil {
		return nil, err
	}
	if format == "" {
		format = "%a %b %d %H:%M:%S %Y"
	}
	t, _, err := strptime(s, format)
	if err != nil {
		return nil, err
	}
	return structTime(t), nil
}

func structTime(t time.Time) *namedTuple {
	wday := (int(t.Weekday()) + 6) % 7 // Monday is 0
	vals := []int{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), wday, t.YearDay(), -1}
	nt := &namedTuple{typ: "time.struct_time", names: []string{"tm_year", "tm_mon", "tm_mday", "tm_hour", "tm_min", "tm_sec", "tm_wday", "tm_yday", "tm_isdst"}}
	for _, v := range vals {
		nt.values = append(nt.values, starlark.MakeInt(v))
	}
	return nt
}
