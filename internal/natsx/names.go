package natsx

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the subject prefix of a deployment that does not choose one.
const DefaultPrefix = "contrail"

// Names derives every JetStream resource name from one prefix, so that two deployments can share a NATS account
// without seeing each other's data, and so that no other package spells a subject by hand.
type Names struct {
	Prefix string
}

// NewNames validates the prefix: it becomes a subject token and part of stream and bucket names.
func NewNames(prefix string) (Names, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !ValidToken(prefix) || strings.ContainsAny(prefix, "-") {
		return Names{}, fmt.Errorf("prefix %q: use letters, digits and underscores only", prefix)
	}
	return Names{Prefix: prefix}, nil
}

// ValidToken reports whether s can be one token of a NATS subject: non-empty, without '.', '*', '>' or whitespace.
func ValidToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// MaxSubjectLen bounds every subject, filter and KV key the platform sends, in bytes. The server counts a whole
// protocol line against its max_control_line (4 KiB by default) and closes the connection of a client that sends a
// longer one, which the client does not reconnect: one unchecked 4 kB ID would take the node's connection down.
// The platform's own subjects are a few hundred bytes at most.
const MaxSubjectLen = 1024

// ValidSubject reports whether s is a subject the platform may send: tokens of printable characters without
// whitespace, none empty, at most MaxSubjectLen bytes in all. With wildcards, '*' and '>' may stand as whole
// tokens ('>' last), as in a filter; without, they may not appear at all.
func ValidSubject(s string, wildcards bool) bool {
	if s == "" || len(s) > MaxSubjectLen {
		return false
	}
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		if t == "" {
			return false
		}
		if t == "*" || t == ">" {
			if !wildcards || (t == ">" && i != len(tokens)-1) {
				return false
			}
			continue
		}
		for _, r := range t {
			if r <= ' ' || r == 0x7f || r == '*' || r == '>' {
				return false
			}
		}
	}
	return true
}

// ValidKey reports whether s is a KV key the platform may use (with wildcards, a key filter): the characters KV
// allows (letters, digits, '-', '_', '/', '=', '.'), no empty token, at most MaxSubjectLen bytes.
func ValidKey(s string, wildcards bool) bool {
	if !ValidSubject(s, wildcards) {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '-', r == '_', r == '/', r == '=', r == '.':
		case wildcards && (r == '*' || r == '>'):
		default:
			return false
		}
	}
	return true
}

func (n Names) upper() string { return strings.ToUpper(n.Prefix) }

// EventsStream names the one stream that holds the log: EVENTS for the default prefix, <PREFIX>_EVENTS otherwise.
func (n Names) EventsStream() string {
	if n.Prefix == DefaultPrefix {
		return "EVENTS"
	}
	return n.upper() + "_EVENTS"
}

// DLQStream names the stream that keeps poison events for inspection and re-drive.
func (n Names) DLQStream() string {
	if n.Prefix == DefaultPrefix {
		return "DLQ"
	}
	return n.upper() + "_DLQ"
}

// EventsWildcard is every subject of the log.
func (n Names) EventsWildcard() string { return n.Prefix + ".ev.>" }

// EventSubject is where one event of one aggregate instance is stored: <prefix>.ev.<aggregate>.<id>.<event>.
func (n Names) EventSubject(aggregate, id, event string) string {
	return n.Prefix + ".ev." + aggregate + "." + id + "." + event
}

// AggregateFilter matches every event of one aggregate instance; the optimistic-concurrency check covers it.
func (n Names) AggregateFilter(aggregate, id string) string {
	return n.Prefix + ".ev." + aggregate + "." + id + ".>"
}

// CommittedWildcard is where the log republishes every event it stored, on the event's subject with "cm" for "ev":
// core NATS subscribers see committed events only (never an append the log refused), with their stream sequence,
// and cost the server no consumer.
func (n Names) CommittedWildcard() string { return n.Prefix + ".cm.>" }

// CommittedSubject is where the log republishes one stored event (EventSubject with "cm" for "ev").
func (n Names) CommittedSubject(aggregate, id, event string) string {
	return n.Prefix + ".cm." + aggregate + "." + id + "." + event
}

// CommittedFilter matches the republished events of one aggregate instance.
func (n Names) CommittedFilter(aggregate, id string) string {
	return n.Prefix + ".cm." + aggregate + "." + id + ".>"
}

// SplitCommittedSubject returns the aggregate and id of a republished event's subject.
func (n Names) SplitCommittedSubject(subject string) (aggregate, id string, ok bool) {
	rest, found := strings.CutPrefix(subject, n.Prefix+".cm.")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// TypeFilter matches one event type ("session.message_posted") on every instance, or every type of an aggregate
// when the name part is "*" ("session.*").
func (n Names) TypeFilter(eventType string) string {
	agg, name, ok := strings.Cut(eventType, ".")
	if !ok {
		return n.Prefix + ".ev." + eventType + ".*.*"
	}
	return n.Prefix + ".ev." + agg + ".*." + name
}

// SplitEventSubject returns the aggregate, id and event name of an event subject.
func (n Names) SplitEventSubject(subject string) (aggregate, id, event string, ok bool) {
	rest, found := strings.CutPrefix(subject, n.Prefix+".ev.")
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// LiveSubject carries what is not an event but is worth seeing as it happens (token deltas of a streaming
// answer). Core NATS: lost when nobody listens.
func (n Names) LiveSubject(aggregate, id string) string {
	return n.Prefix + ".live." + aggregate + "." + id
}

// DLQSubject is where a handler's poison events go.
func (n Names) DLQSubject(handler string) string { return n.Prefix + ".dlq." + handler }

// DLQWildcard matches every handler's poison events.
func (n Names) DLQWildcard() string { return n.Prefix + ".dlq.>" }

// RedriveSubject is where re-driven events are handed back to one handler.
func (n Names) RedriveSubject(handler string) string { return n.Prefix + ".redrive." + handler }

// RedriveWildcard matches every handler's re-drive subject.
func (n Names) RedriveWildcard() string { return n.Prefix + ".redrive.>" }

// RedriveStream holds re-driven events until their handler has taken them.
func (n Names) RedriveStream() string {
	if n.Prefix == DefaultPrefix {
		return "REDRIVE"
	}
	return n.upper() + "_REDRIVE"
}

// Bucket names a KV bucket of this deployment.
func (n Names) Bucket(name string) string { return n.Prefix + "_" + name }

// ObjectStore names the object store that holds blobs (files, embeds, generated images).
func (n Names) ObjectStore() string { return n.Prefix + "_blobs" }

// Consumer names a durable consumer of this deployment.
func (n Names) Consumer(kind, name string) string { return n.Prefix + "_" + kind + "_" + name }

// TimersStream holds durable timers (a task's sleep): JetStream message schedules that publish on the fire subject
// when they are due.
func (n Names) TimersStream() string {
	if n.Prefix == DefaultPrefix {
		return "TIMERS"
	}
	return n.upper() + "_TIMERS"
}

// TimersWildcard is every subject of the timers stream.
func (n Names) TimersWildcard() string { return n.Prefix + ".timer.>" }

// TimerScheduleSubject is where the schedule of one timer is kept until it fires; owner and key are subject tokens.
func (n Names) TimerScheduleSubject(owner, key string) string {
	return n.Prefix + ".timer.at." + owner + "." + key
}

// TimerFireSubject is where an owner's timers land when due.
func (n Names) TimerFireSubject(owner string) string { return n.Prefix + ".timer.fire." + owner }

// RunExpirySubject is where a run's expiry schedule lands at its expires_at (apart from the tasks' fired timers).
func (n Names) RunExpirySubject(run string) string { return n.Prefix + ".timer.expire." + run }

// RunExpiryWildcard matches every fired run expiry.
func (n Names) RunExpiryWildcard() string { return n.Prefix + ".timer.expire.>" }

// TimerFireWildcard matches every fired timer.
func (n Names) TimerFireWildcard() string { return n.Prefix + ".timer.fire.>" }
