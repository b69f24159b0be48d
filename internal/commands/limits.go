package commands

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/internal/errs"
)

// The limits of every field a client sends that ends up in an event, checked before anything is appended; a field
// over its limit is a 400 naming the field, whose message gives the limit and never repeats the value. docs/limits.md
// lists them for users. Where OpenAI documents a limit the /v1 face keeps it; the rest are Contrail's, chosen so
// that one event stays well under the log's max payload (1 MiB by default). An event that would still not fit (a
// run copies its assistant's instructions and tools, and several fields at their limits add up) is a 413.
//
// "chars" limits count Unicode characters, as OpenAI does; "bytes" limits count bytes.
const (
	// The OpenAI Assistants API (/v1), OpenAI's own limits.
	maxNameChars         = 256     // an assistant's name
	maxDescriptionChars  = 512     // an assistant's description
	maxInstructionsChars = 256_000 // instructions of an assistant or a run, and a run's additional_instructions
	maxTools             = 128     // tools of an assistant or a run
	maxMetadataPairs     = 16      // metadata of every object
	maxMetadataKeyChars  = 64
	maxMetadataValChars  = 512
	maxContentChars      = 256_000 // a message's text, all its parts together
	// The /v1 face, Contrail's limits where OpenAI documents none.
	maxModelChars           = 256      // a model name (assistant, run)
	maxToolDescriptionChars = 1024     // a function tool's description
	maxToolParametersBytes  = 64 << 10 // a function tool's JSON schema
	maxContentParts         = 64       // parts of one message's content
	maxURLChars             = 2048     // an image_url's url, and every URL of an agent
	maxMessages             = 32       // a thread's first messages, a run's additional_messages
	maxToolOutputs          = 128      // outputs submitted at once
	maxToolOutputChars      = 256_000  // one tool output
	maxToolCallIDBytes      = 128      // a tool_call_id
	maxJSONBytes            = 64 << 10 // tool_resources, response_format, tool_choice
	maxFilenameChars        = 512      // an uploaded file's or embed's name
	maxContentTypeBytes     = 255      // the content type of an upload or an embed

	// The Fixie face (GraphQL, /api).
	maxHandle      = 64   // an agent's handle (bytes)
	maxAgentName   = 200  // an agent's name (bytes)
	maxDescription = 4000 // an agent's or a session's description (bytes)
	maxQueries     = 100  // an agent's sample queries
	maxQueryText   = 2000 // one sample query (bytes)
	// MaxAgentRef bounds what names an agent: an ID, a handle, owner/handle (bytes).
	MaxAgentRef    = 256
	maxAudience    = 512 // the audience of an agent's tokens (bytes)
	maxSessionName = 200 // a session's name (bytes)
	maxKeyName     = 100 // an API key's name (bytes)
	// MaxMessageText bounds a session message's text, in bytes.
	MaxMessageText = 32 << 10
	// MaxMessageEmbeds bounds how many embeds one message carries.
	MaxMessageEmbeds = 16
	// maxHostChars is DNS's limit on a host name.
	maxHostChars = 253
)

// checkChars refuses a string of more than max characters, in OpenAI's words.
func checkChars(field, s string, max int) error {
	if len(s) <= max { // a string of at most max bytes has at most max characters
		return nil
	}
	if n := utf8.RuneCountInString(s); n > max {
		return errs.InvalidField(field, "string too long. Expected a string with maximum length %d, but got a string with length %d instead", max, n)
	}
	return nil
}

// checkBytes refuses a string of more than max bytes.
func checkBytes(field, s string, max int) error {
	if len(s) > max {
		return errs.InvalidField(field, "%s is %d bytes long; at most %d are allowed", field, len(s), max)
	}
	return nil
}

// checkCount refuses a list of more than max items, in OpenAI's words.
func checkCount(field string, n, max int) error {
	if n > max {
		return errs.InvalidField(field, "array too long. Expected an array with maximum length %d, but got an array with length %d instead", max, n)
	}
	return nil
}

// CheckURL refuses what is not an absolute http(s) URL a server can be reached at: a scheme of http or https, a
// host (a name of at most 253 characters of letters, digits, '-' and '.', or an IP address), an optional port, at
// most 2048 characters in all. The message names the field and never repeats the URL.
func CheckURL(field, raw string) error {
	if raw == "" {
		return errs.Missing(field)
	}
	if err := checkChars(field, raw, maxURLChars); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return errs.InvalidField(field, "%s must be an absolute http:// or https:// URL", field)
	}
	if err := checkHost(u.Hostname()); err != nil {
		return errs.InvalidField(field, "%s: %v", field, err)
	}
	return nil
}

// checkHost accepts an IP address or a DNS name.
func checkHost(h string) error {
	if h == "" {
		return fmt.Errorf("the URL has no host")
	}
	if net.ParseIP(h) != nil {
		return nil
	}
	if len(h) > maxHostChars {
		return fmt.Errorf("the host name is %d characters long; DNS allows %d", len(h), maxHostChars)
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("the host name has an empty label or one longer than 63 characters")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("the host name may hold letters, digits, '-' and '.' only")
			}
		}
	}
	return nil
}

// maxImageDataURLBytes bounds an image given as a data URL (a message's image_url): the image is kept whole in the
// message's event, as the model is to be sent it, and the bound leaves room in the event (at most 1 MiB,
// JetStream's default max_payload) for the rest of the message. It is the bound of a Responses input_image's URL.
const maxImageDataURLBytes = 512 << 10

// CheckImageURL accepts an image's URL as a model is given one: an http(s) URL a server can be reached at
// (CheckURL), or a data URL of a PNG, JPEG, GIF or WebP image in base64 (its type known by its bytes,
// file.ImageType) of at most 512 KiB. Any other scheme (file:, ftp:) would have the model's provider, or this
// server, read what it should not. The message names the field and never repeats the URL.
func CheckImageURL(field, raw string) error {
	if len(raw) < 5 || !strings.EqualFold(raw[:5], "data:") {
		if u, err := url.Parse(raw); raw != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https")) {
			return errs.InvalidField(field, "%s must be an absolute http:// or https:// URL, or a data URL of an image (data:image/png;base64,...)", field)
		}
		return CheckURL(field, raw)
	}
	if err := checkBytes(field, raw, maxImageDataURLBytes); err != nil {
		return err
	}
	meta, payload, ok := strings.Cut(raw[5:], ",")
	meta = strings.ToLower(meta)
	if !ok || !strings.HasPrefix(meta, "image/") || !strings.HasSuffix(meta, ";base64") {
		return errs.InvalidField(field, "%s: a data URL of an image is data:image/<type>;base64,<data>", field)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return errs.InvalidField(field, "%s: the data URL's data is not base64", field)
	}
	if _, ok := file.ImageType(data); !ok {
		return errs.InvalidField(field, "%s: the data URL's data is not an image the model can read (PNG, JPEG, GIF or WebP)", field)
	}
	return nil
}
