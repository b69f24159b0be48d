package file_test

import (
	"testing"

	"github.com/contrailhq/contrail/domain/file"
)

// TestImageType: the four image types the models read are known by their first bytes; anything else, a short file
// or a type the upload only claims, is not an image.
func TestImageType(t *testing.T) {
	for head, want := range map[string]string{
		"\x89PNG\r\n\x1a\n\x00\x00\x00\x0d": "image/png",
		"\xff\xd8\xff\xe0\x00\x10JFIF\x00":  "image/jpeg",
		"GIF89a\x01\x00\x01\x00\x00\x00":    "image/gif",
		"GIF87a":                            "image/gif",
		"RIFF\x24\x00\x00\x00WEBPVP8 ":      "image/webp",
		"RIFF\x24\x00\x00\x00WAVEfmt ":      "",
		"RIFF\x24\x00":                      "",
		"%PDF-1.7\n":                        "",
		"<svg xmlns=":                       "",
		"":                                  "",
	} {
		got, ok := file.ImageType([]byte(head))
		if got != want || ok != (want != "") {
			t.Errorf("ImageType(%q) = %q %v, want %q", head, got, ok, want)
		}
	}
}
