package openaiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
)

// maxBodyBytes bounds a JSON request body (instructions may be 256,000 characters, messages long).
const maxBodyBytes = 8 << 20

// fields is a JSON object's fields, each decoded on demand, so that a bad value is reported with the name of its
// field (under prefix, for a nested object: "thread."). Fields the API does not know are never looked at: they are
// ignored, as OpenAI ignores them.
type fields struct {
	m      map[string]json.RawMessage
	prefix string
}

// param is how errors name a field.
func (f fields) param(name string) string { return f.prefix + name }

// readFields reads a request body that must be a JSON object. An empty body is an empty object.
func readFields(r *http.Request) (fields, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fields{}, errs.E(errs.TooLarge, "the request body is larger than %d bytes", maxBodyBytes)
		}
		return fields{}, errs.E(errs.Invalid, "could not read the request body: %v", err)
	}
	return parseFields(raw)
}

func parseFields(raw []byte) (fields, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fields{m: map[string]json.RawMessage{}}, nil
	}
	var f fields
	if err := json.Unmarshal(raw, &f.m); err != nil || f.m == nil {
		return fields{}, errs.E(errs.Invalid, "We could not parse the JSON body of your request. (HINT: This likely means you "+
			"aren't using your HTTP library correctly. The API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	return f, nil
}

// has reports whether the field was sent (even as null).
func (f fields) has(name string) bool { _, ok := f.m[name]; return ok }

// null reports whether the field was sent as null.
func (f fields) null(name string) bool {
	raw, ok := f.m[name]
	return ok && bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// get decodes a field into v. It reports whether the field was sent with a value (absent and null are false).
func get[T any](f fields, name string, v *T) (bool, error) {
	raw, ok := f.m[name]
	if !ok || f.null(name) {
		return false, nil
	}
	return true, decodeValue(raw, f.param(name), v)
}

// decodeValue decodes one JSON value, naming param in the error OpenAI's way.
func decodeValue[T any](raw json.RawMessage, param string, v *T) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			at := param
			if te.Field != "" {
				at += "." + te.Field
			}
			return errs.InvalidField(at, "Invalid type for '%s': expected %s, but got %s instead.", at, kindOf(te.Type), article(te.Value))
		}
		return errs.InvalidField(param, "Invalid value for '%s': %v.", param, err)
	}
	return nil
}

// kindOf names a Go type as OpenAI's messages name JSON types.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return "a decimal"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "another type"
}

func article(jsonKind string) string {
	switch jsonKind {
	case "array", "object":
		return "an " + jsonKind
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	}
	if strings.HasPrefix(jsonKind, "number") {
		return "a number"
	}
	return "a " + jsonKind
}

// str decodes a string field; absent or null gives "".
func (f fields) str(name string) (string, error) {
	var s string
	_, err := get(f, name, &s)
	return s, err
}

// optStr decodes a nullable string field: nil when absent or null.
func (f fields) optStr(name string) (*string, error) {
	var s string
	ok, err := get(f, name, &s)
	if !ok || err != nil {
		return nil, err
	}
	return &s, nil
}

// optFloat decodes a nullable number field.
func (f fields) optFloat(name string) (*float64, error) {
	var v float64
	ok, err := get(f, name, &v)
	if !ok || err != nil {
		return nil, err
	}
	return &v, nil
}

// optInt decodes a nullable integer field.
func (f fields) optInt(name string) (*int, error) {
	var v int
	ok, err := get(f, name, &v)
	if !ok || err != nil {
		return nil, err
	}
	return &v, nil
}

// metadata decodes a metadata object: string keys to string values.
func (f fields) metadata(name string) (map[string]string, error) {
	var m map[string]string
	_, err := get(f, name, &m)
	return m, err
}

// raw returns a field as sent, or nil when absent or null; it must be an object or, when strOK, a string.
func (f fields) raw(name string, strOK bool) (json.RawMessage, error) {
	raw, ok := f.m[name]
	if !ok || f.null(name) {
		return nil, nil
	}
	t := bytes.TrimSpace(raw)
	if t[0] == '{' || (strOK && t[0] == '"') {
		return t, nil
	}
	if strOK {
		return nil, errs.InvalidField(f.param(name), "Invalid type for '%s': expected a string or an object.", f.param(name))
	}
	return nil, errs.InvalidField(f.param(name), "Invalid type for '%s': expected an object.", f.param(name))
}

// list decodes an array field element by element, so that an error names the element: "tools[1].function".
func list[T any](f fields, name string) ([]T, bool, error) {
	var raws []json.RawMessage
	ok, err := get(f, name, &raws)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make([]T, len(raws))
	for i, raw := range raws {
		if err := decodeValue(raw, fmt.Sprintf("%s[%d]", f.param(name), i), &out[i]); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}

// tools decodes a list of tools.
func (f fields) tools(name string) ([]events.Tool, bool, error) {
	return list[events.Tool](f, name)
}

// message is a message as a request sends it.
type message struct {
	Role        string            `json:"role"`
	Content     json.RawMessage   `json:"content"`
	Attachments json.RawMessage   `json:"attachments"`
	Metadata    map[string]string `json:"metadata"`
}

// messages decodes a list of messages (a thread's first messages, a run's additional messages).
func (f fields) messages(name string) ([]commands.NewMessage, error) {
	msgs, _, err := list[message](f, name)
	if err != nil {
		return nil, err
	}
	out := make([]commands.NewMessage, 0, len(msgs))
	for i, m := range msgs {
		nm, err := m.toCommand(fmt.Sprintf("%s[%d]", f.param(name), i))
		if err != nil {
			return nil, err
		}
		out = append(out, nm)
	}
	return out, nil
}

func (m message) toCommand(param string) (commands.NewMessage, error) {
	prefix := param
	if prefix != "" {
		prefix += "."
	}
	switch m.Role {
	case "user", "assistant":
	case "":
		return commands.NewMessage{}, errs.Missing(prefix + "role")
	default:
		return commands.NewMessage{}, errs.InvalidField(prefix+"role", "Invalid value: '%s'. Supported values are: 'user' and 'assistant'.", m.Role)
	}
	content, err := contentParts(m.Content, prefix+"content")
	if err != nil {
		return commands.NewMessage{}, err
	}
	att := bytes.TrimSpace(m.Attachments)
	if len(att) > 0 && !bytes.Equal(att, []byte("null")) {
		if att[0] != '[' {
			return commands.NewMessage{}, errs.InvalidField(prefix+"attachments", "Invalid type for '%sattachments': expected an array.", prefix)
		}
		if _, err := commands.ParseAttachments(prefix+"attachments", att); err != nil {
			return commands.NewMessage{}, err
		}
	} else {
		att = nil
	}
	return commands.NewMessage{Role: m.Role, Content: content, Attachments: att, Metadata: m.Metadata}, nil
}

// contentPart is a part of a message's content as a request sends it.
type contentPart struct {
	Type      string            `json:"type"`
	Text      string            `json:"text"`
	ImageFile *events.ImageFile `json:"image_file"`
	ImageURL  *events.ImageURL  `json:"image_url"`
}

// contentParts reads a message's content: a string, or an array of parts.
func contentParts(raw json.RawMessage, param string) ([]events.ContentPart, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, errs.Missing(param)
	}
	if t[0] == '"' {
		var s string
		if err := decodeValue(t, param, &s); err != nil {
			return nil, err
		}
		return []events.ContentPart{{Type: "text", Text: s}}, nil
	}
	if t[0] != '[' {
		return nil, errs.InvalidField(param, "Invalid type for '%s': expected a string or an array of content parts.", param)
	}
	var raws []json.RawMessage
	if err := decodeValue(t, param, &raws); err != nil {
		return nil, err
	}
	parts := make([]events.ContentPart, 0, len(raws))
	for i, r := range raws {
		at := fmt.Sprintf("%s[%d]", param, i)
		var p contentPart
		if err := decodeValue(r, at, &p); err != nil {
			return nil, err
		}
		switch p.Type {
		case "text":
			parts = append(parts, events.ContentPart{Type: "text", Text: p.Text})
		case "image_file":
			if p.ImageFile == nil || p.ImageFile.FileID == "" {
				return nil, errs.Missing(at + ".image_file.file_id")
			}
			parts = append(parts, events.ContentPart{Type: "image_file", ImageFile: p.ImageFile})
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, errs.Missing(at + ".image_url.url")
			}
			parts = append(parts, events.ContentPart{Type: "image_url", ImageURL: p.ImageURL})
		case "":
			return nil, errs.Missing(at + ".type")
		default:
			return nil, errs.InvalidField(at+".type", "Invalid value: '%s'. Supported values are: 'image_file', 'image_url', and 'text'.", p.Type)
		}
	}
	if len(parts) == 0 {
		return nil, errs.InvalidField(param, "Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", param)
	}
	return parts, nil
}

// object decodes a nested object field; its errors name their fields under it.
func (f fields) object(name string) (fields, bool, error) {
	var m map[string]json.RawMessage
	ok, err := get(f, name, &m)
	if !ok || err != nil {
		return fields{}, ok, err
	}
	return fields{m: m, prefix: f.param(name) + "."}, true, nil
}

// wantsStream reads the "stream" flag of a create-run request.
func (f fields) wantsStream() (bool, error) {
	var b bool
	_, err := get(f, "stream", &b)
	return b, err
}
