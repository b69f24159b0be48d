package fixieapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// EmbedCommands is what the face asks of the embed commands (commands.Embeds).
type EmbedCommands interface {
	Upload(ctx context.Context, actor auth.Principal, contentType, filename string, body io.Reader) (commands.Embed, eventstore.Appended, error)
	Get(ctx context.Context, actor auth.Principal, id string) (commands.Embed, error)
	Load(ctx context.Context, id string) (commands.Embed, error)
	Open(ctx context.Context, e commands.Embed) (io.ReadCloser, error)
}

// EmbedsFace is /api/embeds: uploads, and the open route that serves a signed URL's bytes.
type EmbedsFace struct {
	cmds   EmbedCommands
	views  *projections.Runner
	signer *Signer
	logger *slog.Logger
}

// NewEmbedsFace returns the embeds face.
func NewEmbedsFace(cmds EmbedCommands, views *projections.Runner, signer *Signer, logger *slog.Logger) *EmbedsFace {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &EmbedsFace{cmds: cmds, views: views, signer: signer, logger: logger}
}

// Prefix implements httpapi.Face.
func (f *EmbedsFace) Prefix() string { return "/api/embeds" }

// WriteError implements httpapi.Face.
func (f *EmbedsFace) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(f.logger, w, r, err)
}

// Routes implements httpapi.Face.
func (f *EmbedsFace) Routes(r chi.Router) {
	r.Post("/", f.upload)
	r.Get("/{id}", f.get)
}

// OpenRoutes implements httpapi.OpenFace: a signed URL needs no key.
func (f *EmbedsFace) OpenRoutes(r chi.Router) {
	r.Get("/api/embeds/{id}/content", f.content)
}

// EmbedJSON is an embed as the REST face answers it.
type EmbedJSON struct {
	ID          string    `json:"id"`
	ContentType string    `json:"content_type"`
	ContentHash string    `json:"content_hash"`
	Size        int64     `json:"size"`
	Filename    string    `json:"filename,omitempty"`
	Created     time.Time `json:"created"`
	// URI is a signed URL of the bytes; it expires.
	URI string `json:"uri"`
}

// upload takes the raw body with its Content-Type, or a multipart form whose first file part is the embed.
func (f *EmbedsFace) upload(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.From(r.Context())
	ct := r.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	var body io.Reader
	filename := ""
	if mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, commands.MaxEmbedSize+1<<20)
		part, err := firstFilePart(r, params["boundary"])
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		body, filename = part, part.FileName()
		ct = part.Header.Get("Content-Type")
	} else {
		if r.ContentLength > commands.MaxEmbedSize {
			f.WriteError(w, r, errs.E(errs.TooLarge, "an embed holds at most %d bytes (10 MiB)", commands.MaxEmbedSize))
			return
		}
		body = http.MaxBytesReader(w, r.Body, commands.MaxEmbedSize)
	}
	e, res, err := f.cmds.Upload(r.Context(), p, ct, filename, body)
	// The answer is the embed as the command left it; the wait is for the client's next read, which may list
	// the embeds of a message from the embeds read model. Past the wait the embed is made all the same, and is
	// answered: a message that names it finds it in the log (graph embedInfo).
	err = f.views.ShowsWrite(r.Context(), res, err, projections.Embeds{})
	if projections.PastWait(r.Context(), err) && e.ID != "" {
		err = nil
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	uri, err := f.signer.EmbedURL(r.Context(), e.ID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, EmbedJSON{ID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash,
		Size: e.Size, Filename: e.Filename, Created: e.Created, URI: uri})
}

// firstFilePart finds the first part of a multipart form that carries a file.
func firstFilePart(r *http.Request, boundary string) (*multipart.Part, error) {
	if boundary == "" {
		return nil, errs.InvalidField("Content-Type", "multipart/form-data needs a boundary")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errs.InvalidField("body", "read multipart form: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errs.InvalidField("file", "the multipart form has no file part")
		}
		if err != nil {
			return nil, errs.InvalidField("body", "read multipart form: %v", err)
		}
		if part.FileName() != "" || part.FormName() == "file" {
			return part, nil
		}
	}
}

func (f *EmbedsFace) get(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.From(r.Context())
	id := chi.URLParam(r, "id")
	if err := ids.Check("id", ids.Embed, id); err != nil {
		f.WriteError(w, r, err)
		return
	}
	e, err := f.cmds.Get(r.Context(), p, id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	uri, err := f.signer.EmbedURL(r.Context(), e.ID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, EmbedJSON{ID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash,
		Size: e.Size, URI: uri})
}

// content serves a signed URL: the bytes with their stored content type. Embeds are immutable, so the answer may be
// cached until the URL expires.
func (f *EmbedsFace) content(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if err := ids.Check("id", ids.Embed, id); err != nil {
		f.WriteError(w, r, err)
		return
	}
	q := r.URL.Query()
	if err := f.signer.Verify(r.Context(), id, q.Get("exp"), q.Get("sig")); err != nil {
		f.WriteError(w, r, err)
		return
	}
	e, err := f.cmds.Load(r.Context(), id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !e.Exists {
		f.WriteError(w, r, errs.NotFoundf("embed", id))
		return
	}
	rd, err := f.cmds.Open(r.Context(), e)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	defer rd.Close()
	w.Header().Set("Content-Type", e.ContentType)
	w.Header().Set("Content-Length", strconv.FormatInt(e.Size, 10))
	w.Header().Set("ETag", `"`+strings.TrimPrefix(e.ContentHash, "sha256:")+`"`)
	w.Header().Set("Cache-Control", "private, max-age=300, immutable")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		if _, err := io.Copy(w, rd); err != nil {
			f.logger.Debug("serve embed", "embed", id, "err", err)
		}
	}
}
