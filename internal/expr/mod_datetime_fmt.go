package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// strftime formats t as Python's strftime does (glibc's, with the %-d flag that drops padding).
func strftime(t time.Time, aware bool, format string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		unpad := false
		if format[i] == '-' && i+1 < len(format) {
			unpad = true
			i++
		}
		s, err := directive(t, aware, format[i])
		if err != nil {
			return "", err
		}
		if unpad && len(s) > 1 {
			if trimmed := strings.TrimLeft(s, "0 "); trimmed != "" {
				s = trimmed
			} else {
				s = "0"
			}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func directive(t time.Time, aware bool, d byte) (string, error) {
	two := func(n int) string { return fmt.Sprintf("%02d", n) }
	switch d {
	case 'Y':
		return strconv.Itoa(t.Year()), nil
	case 'y':
		return two(t.Year() % 100), nil
	case 'm':
		return two(int(t.Month())), nil
	case 'd':
		return two(t.Day()), nil
	case 'e':
		return fmt.Sprintf("%2d", t.Day()), nil
	case 'H':
		return two(t.Hour()), nil
	case 'I':
		return two((t.Hour()+11)%12 + 1), nil
	case 'M':
		return two(t.Minute()), nil
	case 'S':
		return two(t.Second()), nil
	case 'f':
		return fmt.Sprintf("%06d", t.Nanosecond()/1000), nil
	case 'p':
		return t.Format("PM"), nil
	case 'a', 'A', 'b', 'B', 'h':
		return t.Format(map[byte]string{'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'h': "Jan"}[d]), nil
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay()), nil
	case 'w':
		return strconv.Itoa(int(t.Weekday())), nil
	case 'u':
		return strconv.Itoa((int(t.Weekday())+6)%7 + 1), nil
	case 'U', 'W':
		return two(weekOfYear(t, d == 'W')), nil
	case 'z', 'Z':
		if !aware {
			return "", nil
		}
		if d == 'Z' {
			return tzName(t), nil
		}
		return t.Format("-0700"), nil
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006"), nil
	case 'x':
		return t.Format("01/02/06"), nil
	case 'X':
		return t.Format("15:04:05"), nil
	case 'F':
		return t.Format("2006-01-02"), nil
	case 'T':
		return t.Format("15:04:05"), nil
	case '%':
		return "%", nil
	}
	return "", fmt.Errorf("strftime: the directive %%%c is not supported", d)
}

// weekOfYear is %U (weeks starting on Sunday) or %W (on Monday): days before the first such day are week 0.
func weekOfYear(t time.Time, monday bool) int {
	wd := int(t.Weekday())
	if monday {
		wd = (wd + 6) % 7
	}
	return (t.YearDay() + 6 - wd) / 7
}

func tzName(t time.Time) string {
	_, off := t.Zone()
	if off == 0 {
		return "UTC"
	}
	return "UTC" + t.Format("-07:00")
}

// strptimeLayout maps Python's directives to Go's layout elements (the lenient ones, which read one or two
// digits as Python does).
var strptimeLayout = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "1", 'd': "2", 'H': "15", 'I': "3", 'M': "4", 'S': "5", 'p': "PM",
	'b': "Jan", 'h': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'z': "-0700", 'Z': "MST",
}

// strptime parses s as Python's strptime does for the common directives; it reports whether the format
// had a time zone (%z), which makes the datetime aware.
func strptime(s, format string) (time.Time, bool, error) {
	var layout strings.Builder
	aware := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			layout.WriteByte(c)
			continue
		}
		i++
		switch d := format[i]; {
		case d == '%':
			layout.WriteByte('%')
		case d == 'f':
			// Go reads a fraction after the seconds by itself; drop the '.' written before %f.
			l := strings.TrimSuffix(layout.String(), ".")
			layout.Reset()
			layout.WriteString(l)
		case strptimeLayout[d] != "":
			aware = aware || d == 'z'
			layout.WriteString(strptimeLayout[d])
		default:
			return time.Time{}, false, fmt.Errorf("strptime: the directive %%%c is not supported", d)
		}
	}
	t, err := time.Parse(layout.String(), s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("time data %q does not match format %q", s, format)
	}
	return t, aware, nil
}

// isoLayouts are the forms fromisoformat reads, the aware ones first.
var isoLayouts = []struct {
	layout string
	aware  bool
}{
	{"2006-01-02T15:04:05.999999999Z07:00", true}, {"2006-01-02T15:04Z07:00", true},
	{"2006-01-02T15:04:05.999999999", false}, {"2006-01-02T15:04", false}, {"2006-01-02T15", false},
	{"2006-01-02", false}, {"20060102", false},
}

func parseISO(s string) (time.Time, bool, error) {
	norm := s
	if len(norm) > 10 && norm[10] == ' ' {
		norm = norm[:10] + "T" + norm[11:]
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l.layout, norm); err == nil {
			return t, l.aware, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("invalid isoformat string: %q", s)
}
