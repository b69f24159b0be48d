package ids

import "github.com/contrailhq/contrail/internal/errs"

// IsUUID reports whether s is a UUID in its canonical form, 8-4-4-4-12 hexadecimal digits (Julep's IDs). Letters
// may be of either case; Canonical lowers them.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// CanonicalUUID lowers a UUID's letters, so that one ID has one spelling in subjects and keys.
func CanonicalUUID(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// CheckUUID returns nil when s is a UUID, else an errs.Invalid error naming param that does not repeat s.
func CheckUUID(param, s string) error {
	if IsUUID(s) {
		return nil
	}
	if s == "" {
		return errs.Missing(param)
	}
	return errs.InvalidField(param, "invalid '%s': expected a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)", param)
}
