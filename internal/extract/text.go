package extract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// textReader reads r as UTF-8 text: UTF-16 with a byte-order mark is decoded, a UTF-8 byte-order mark dropped, a
// file whose start is not UTF-8 is read as Windows-1252 (the usual legacy encoding of exported CSV and text), and
// any invalid sequence left in UTF-8 text becomes U+FFFD. It streams.
func textReader(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, sniffLen)
	head, _ := br.Peek(sniffLen) // a short file is all head; a read error surfaces on the next Read
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	case !validUTF8(head):
		return transform.NewReader(br, charmap.Windows1252.NewDecoder())
	default:
		return transform.NewReader(br, unicode.UTF8BOM.NewDecoder())
	}
}

func extractText(r io.Reader, s *sink) error {
	_, err := io.Copy(s, textReader(r))
	return err
}

// extractJSON checks that the file is JSON (one value, or several as in JSON Lines) while copying its text: the
// JSON is indexed as it is written, keys and all, which is what a search for a key or a value needs.
func extractJSON(r io.Reader, s *sink) error {
	dec := json.NewDecoder(io.TeeReader(textReader(r), s))
	depth := 0 // Token reports io.EOF at the end of the input even inside an object
	for {
		tok, err := dec.Token()
		switch {
		case errors.Is(err, io.EOF) && depth == 0:
			return nil
		case errors.Is(err, io.EOF):
			return invalid(nil, "the file is not valid JSON: it ends inside an object or array")
		case s.err != nil:
			return s.err
		case err != nil:
			return invalid(err, "the file is not valid JSON")
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
