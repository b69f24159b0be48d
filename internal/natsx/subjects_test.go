package natsx

import "testing"

func TestSubjectFilterMatchesAsTheServerDoes(t *testing.T) {
	cases := []struct {
		filters []string
		subject string
		want    bool
	}{
		{[]string{"c.ev.thread.*.created"}, "c.ev.thread.t1.created", true},
		{[]string{"c.ev.thread.*.created"}, "c.ev.thread.t1.deleted", false},
		{[]string{"c.ev.thread.*.created"}, "c.ev.thread.t1.created.x", false},
		{[]string{"c.ev.thread.*.created"}, "c.ev.thread.created", false},
		{[]string{"c.ev.thread.*.*"}, "c.ev.thread.t1.anything", true},
		{[]string{"c.ev.thread.*.*"}, "c.ev.run.t1.anything", false},
		{[]string{"c.ev.>"}, "c.ev.thread.t1.created", true},
		{[]string{"c.ev.>"}, "c.ev", false},
		{[]string{"c.ev.run.*.created", "c.ev.thread.*.created"}, "c.ev.thread.t1.created", true},
		{[]string{"c.ev.run.*.created", "c.ev.thread.*.created"}, "c.ev.session.s1.created", false},
		{nil, "c.ev.thread.t1.created", false},
		{[]string{"c.ev.thread.*.created"}, "c.ev.threads.t1.created", false},
	}
	for _, c := range cases {
		if got := NewSubjectFilter(c.filters...).Match(c.subject); got != c.want {
			t.Errorf("filters %v, subject %q: match %v, want %v", c.filters, c.subject, got, c.want)
		}
	}
}
