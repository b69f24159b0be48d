package expr

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.starlark.net/starlark"
)

// pyTZ is a datetime.timezone: UTC or a fixed offset.
type pyTZ struct{ offset int }

var utcTZ = &pyTZ{}

func (z *pyTZ) String() string {
	if z.offset == 0 {
		return "UTC"
	}
	return "UTC" + time.Unix(0, 0).In(time.FixedZone("", z.offset)).Format("-07:00")
}
func (z *pyTZ) pyRepr() string {
	if z.offset == 0 {
		return "datetime.timezone.utc"
	}
	return fmt.Sprintf("datetime.timezone(%s)", (&pyDelta{us: int64(z.offset) * 1_000_000}).pyRepr())
}
func (z *pyTZ) Type() string          { return "timezone" }
func (z *pyTZ) Freeze()               {}
func (z *pyTZ) Truth() starlark.Bool  { return true }
func (z *pyTZ) Hash() (uint32, error) { return starlark.MakeInt(z.offset).Hash() }

// Attr gives Julep's datetime.timezone.utc.utc (the same timezone).
func (z *pyTZ) Attr(name string) (starlark.Value, error) {
	if name == "utc" && z == utcTZ {
		return z, nil
	}
	return nil, fmt.Errorf("timezone has no attribute %q", name)
}
func (z *pyTZ) AttrNames() []string { return nil }

func tzOf(t time.Time) *pyTZ {
	if _, off := t.Zone(); off != 0 {
		return &pyTZ{offset: off}
	}
	return utcTZ
}

// location reads a tz argument: None (nil) or a timezone.
func location(v starlark.Value) (*time.Location, error) {
	switch z := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case *pyTZ:
		if z.offset == 0 {
			return time.UTC, nil
		}
		return time.FixedZone("", z.offset), nil
	}
	return nil, fmt.Errorf("tzinfo must be a datetime.timezone or None, not %s", v.Type())
}

func timezoneClass() *typeObject {
	return &typeObject{
		name:    "timezone",
		members: starlark.StringDict{"utc": utcTZ},
		match:   func(v starlark.Value) bool { _, ok := v.(*pyTZ); return ok },
		new: func(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var d *pyDelta
			if err := starlark.UnpackPositionalArgs("timezone", args, kwargs, 1, &d); err != nil {
				return nil, err
			}
			if d.us%1_000_000 != 0 || d.us <= -usPerDay || d.us >= usPerDay {
				return nil, errors.New("timezone: the offset must be whole seconds, strictly between -24 and 24 hours")
			}
			return &pyTZ{offset: int(d.us / 1_000_000)}, nil
		},
	}
}

func timedeltaClass() *typeObject {
	return &typeObject{
		name:    "timedelta",
		members: starlark.StringDict{},
		match:   func(v starlark.Value) bool { _, ok := v.(*pyDelta); return ok },
		new: func(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var f [7]floatArg
			if err := starlark.UnpackArgs("timedelta", args, kwargs, "days?", &f[0], "seconds?", &f[1],
				"microseconds?", &f[2], "milliseconds?", &f[3], "minutes?", &f[4], "hours?", &f[5], "weeks?", &f[6]); err != nil {
				return nil, err
			}
			us := float64(f[0]*usPerDay + f[1]*1e6 + f[2] + f[3]*1e3 + f[4]*6e7 + f[5]*3.6e9 + f[6]*7*usPerDay)
			if math.Abs(us) > 999_999_999*usPerDay {
				return nil, errors.New("timedelta is out of range")
			}
			return &pyDelta{us: int64(math.RoundToEven(us))}, nil
		},
	}
}

// datetimeClass is datetime.datetime: datetime(year, month, day, hour=0, ...), now(tz=None), utcnow(),
// today(), fromisoformat(s), strptime(s, format), fromtimestamp(ts, tz=None). A naive now() is UTC.
func datetimeClass() *typeObject {
	return &typeObject{
		name:  "datetime",
		match: func(v starlark.Value) bool { d, ok := v.(*pyTime); return ok && !d.date },
		new:   newDatetime,
		members: starlark.StringDict{
			"now":           fn("datetime.now", datetimeNow),
			"utcnow":        fn("datetime.utcnow", datetimeNow),
			"today":         fn("datetime.today", datetimeNow),
			"fromisoformat": fn("datetime.fromisoformat", fromISO),
			"strptime":      fn("datetime.strptime", datetimeStrptime),
			"fromtimestamp": fn("datetime.fromtimestamp", fromTimestamp),
		},
	}
}

func newDatetime(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var y, mo, d, h, mi, s, us int
	var tz starlark.Value = starlark.None
	if err := starlark.UnpackArgs("datetime", args, kwargs, "year", &y, "month", &mo, "day", &d, "hour?", &h,
		"minute?", &mi, "second?", &s, "microsecond?", &us, "tzinfo?", &tz); err != nil {
		return nil, err
	}
	loc, err := location(tz)
	if err != nil {
		return nil, err
	}
	if loc == nil {
		return makeTime(y, mo, d, h, mi, s, us, time.UTC, false, false)
	}
	return makeTime(y, mo, d, h, mi, s, us, loc, true, false)
}

func datetimeNow(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var tz starlark.Value = starlark.None
	if b.Name() == "datetime.now" {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tz?", &tz); err != nil {
			return nil, err
		}
	} else if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	t := now(th).Truncate(time.Microsecond)
	loc, err := location(tz)
	if err != nil || loc == nil {
		return &pyTime{t: t.UTC()}, err
	}
	return &pyTime{t: t.In(loc), aware: true}, nil
}

func fromISO(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	t, aware, err := parseISO(s)
	if err != nil {
		return nil, err
	}
	if b.Name() == "date.fromisoformat" {
		y, m, d := t.Date()
		return &pyTime{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), date: true}, nil
	}
	return &pyTime{t: t.Truncate(time.Microsecond), aware: aware}, nil
}

func datetimeStrptime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s, format string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &s, &format); err != nil {
		return nil, err
	}
	t, aware, err := strptime(s, format)
	if err != nil {
		return nil, err
	}
	return &pyTime{t: t, aware: aware}, nil
}

func fromTimestamp(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ts floatArg
	var tz starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "timestamp", &ts, "tz?", &tz); err != nil {
		return nil, err
	}
	t := time.UnixMicro(int64(math.RoundToEven(float64(ts) * 1e6)))
	loc, err := location(tz)
	if err != nil {
		return nil, err
	}
	if b.Name() == "date.fromtimestamp" {
		y, m, d := t.UTC().Date()
		return &pyTime{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), date: true}, nil
	}
	if loc == nil {
		return &pyTime{t: t.UTC()}, nil
	}
	return &pyTime{t: t.In(loc), aware: true}, nil
}

// dateClass is datetime.date: date(year, month, day), today(), fromisoformat(s), fromtimestamp(ts).
func dateClass() *typeObject {
	return &typeObject{
		name:  "date",
		match: func(v starlark.Value) bool { _, ok := v.(*pyTime); return ok }, // a datetime is a date, as in Python
		new: func(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var y, m, d int
			if err := starlark.UnpackArgs("date", args, kwargs, "year", &y, "month", &m, "day", &d); err != nil {
				return nil, err
			}
			return makeTime(y, m, d, 0, 0, 0, 0, time.UTC, false, true)
		},
		members: starlark.StringDict{
			"today": fn("date.today", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
					return nil, err
				}
				y, m, d := now(th).UTC().Date()
				return &pyTime{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), date: true}, nil
			}),
			"fromisoformat": fn("date.fromisoformat", fromISO),
			"fromtimestamp": fn("date.fromtimestamp", fromTimestamp),
		},
	}
}
