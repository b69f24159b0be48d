package openaiapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// fileNotFound is OpenAI's answer for a file that is not there.
func fileNotFound(id string) error {
	e := errs.E(errs.NotFound, "No such File object: %s", id) // clipped: the ID may be anything a client sent
	e.Field = "id"
	return e
}

// createFile takes a multipart upload: "purpose" and "file" (with its filename). The file's bytes stream to the
// object store; they are never held whole in memory.
func (f *Face) createFile(w http.ResponseWriter, r *http.Request) {
	form, upload, filename, err := f.readUpload(w, r, "purpose")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, res, err := f.d.Files.Create(r.Context(), principal(r), commands.NewFile{Filename: filename, Purpose: form["purpose"], Upload: upload})
	// Past the wait the file is answered from the log (f.file): it went in, and a client must not upload it again.
	if err := f.shownOrDone(r, res, err, projections.Files{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerFile(w, r, id)
}

// readUpload reads a multipart upload: its short fields named fields, and its first "file" part (with its
// filename), whose bytes stream to the object store (Object "" when there was none). On an error, bytes stored
// are discarded.
func (f *Face) readUpload(w http.ResponseWriter, r *http.Request, fields ...string) (map[string]string, commands.Upload, string, error) {
	var upload commands.Upload
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return nil, upload, "", errs.E(errs.Invalid, "Invalid Content-Type header (%s), expected multipart/form-data.", r.Header.Get("Content-Type"))
	}
	r.Body = http.MaxBytesReader(w, r.Body, f.d.MaxUploadBytes+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, upload, "", errs.E(errs.Invalid, "could not read the multipart body: %v", err)
	}
	form := map[string]string{}
	var filename string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.discard(r, upload)
			return nil, commands.Upload{}, "", uploadError(err)
		}
		switch name := part.FormName(); {
		case name == "file":
			if upload.Object != "" {
				continue // one file per upload; OpenAI takes the first
			}
			body := &limited{r: part, n: f.d.MaxUploadBytes}
			upload, err = f.d.Files.StoreUpload(r.Context(), principal(r), part.Header.Get("Content-Type"), body)
			if body.over {
				f.discard(r, upload)
				return nil, commands.Upload{}, "", errs.E(errs.TooLarge, "File is too large: files may be at most %d bytes.", f.d.MaxUploadBytes)
			}
			if err != nil {
				return nil, commands.Upload{}, "", uploadError(err)
			}
			filename = part.FileName()
		case slices.Contains(fields, name):
			b, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				f.discard(r, upload)
				return nil, commands.Upload{}, "", uploadError(err)
			}
			form[name] = string(b)
		}
	}
	return form, upload, filename, nil
}

// discard removes stored bytes of an upload that failed.
func (f *Face) discard(r *http.Request, u commands.Upload) {
	if u.Object != "" {
		_ = f.d.Files.DiscardUpload(r.Context(), u)
	}
}

func uploadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errs.E(errs.TooLarge, "the upload is larger than this server accepts")
	}
	if errs.As(err) != nil {
		return err
	}
	// The form's parts are the file and its purpose; a part the reader cannot parse is most often the file's
	// (its name is in the part's header).
	return errs.InvalidField("file", "could not read the upload: %v", err)
}

// limited reads at most n bytes and notes whether there was more.
type limited struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.over = true
			return 0, errors.New("file too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// file reads a file of the caller's once the files read model shows the file's last event, or else from the log
// (shownOrFolded): a file a client just uploaded, or a run's code wrote and its answer names, is never answered
// missing, nor one deleted answered still there.
func (f *Face) file(r *http.Request, id string) (projections.FileView, error) {
	return ownedShown[projections.FileView](f, r, projections.Files{}, "file", ids.File, id, fileNotFound(id))
}

func (f *Face) answerFile(w http.ResponseWriter, r *http.Request, id string) {
	d, err := f.file(r, id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, fileWire(d))
}

func (f *Face) getFile(w http.ResponseWriter, r *http.Request) {
	f.answerFile(w, r, chi.URLParam(r, "file_id"))
}

func (f *Face) deleteFile(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "file_id")
	if _, err := f.file(r, id); err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Files.Delete(r.Context(), principal(r), id)
	// Past the wait the file is gone all the same: the next read of it folds the log (f.file).
	if err := f.shownOrDone(r, res, err, projections.Files{}); err != nil {
		if errs.CodeOf(err) == errs.NotFound {
			err = fileNotFound(id)
		}
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "file", Deleted: true})
}

// fileContent streams a file's bytes from the object store.
func (f *Face) fileContent(w http.ResponseWriter, r *http.Request) {
	d, err := f.file(r, chi.URLParam(r, "file_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	body, info, err := f.d.Blobs.Get(r.Context(), d.Blob)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	defer body.Close()
	ct := d.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Filename}))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, body); err != nil {
		f.d.Logger.Warn("send file content", "file", d.ID, "err", err)
	}
}

func (f *Face) listFiles(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 10000, 10000)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.d.Views.ListCaughtUp(r.Context(), projections.Files{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, err := projections.ListAll[projections.Listed[projections.FileView]](r.Context(), f.d.Views, "files",
		principal(r).AccountID+".*")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	purpose := r.URL.Query().Get("purpose")
	items := make([]listed[fileObject], 0, len(docs))
	for _, d := range docs {
		if purpose != "" && d.Obj.Purpose != purpose {
			continue
		}
		items = append(items, listed[fileObject]{id: d.Obj.ID, seq: d.Seq, obj: fileWire(d.Obj)})
	}
	writeJSON(w, paginate(items, p))
}
