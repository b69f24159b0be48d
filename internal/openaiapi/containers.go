package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/container"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// ContainerCommands is what the face asks of the container commands (commands.Containers): OpenAI's containers as
// far as code_interpreter needs them.
type ContainerCommands interface {
	Create(ctx context.Context, actor auth.Principal, name string, fileIDs []string, expiresAfter int) (string, eventstore.Appended, error)
	Get(ctx context.Context, account, id string, atLeast uint64) (container.State, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
	// AddFile adds a file to a container the caller loaded with Get.
	AddFile(ctx context.Context, actor auth.Principal, s *container.State, fileID string) (container.File, error)
	// DeleteFile removes a file from a container of the caller's.
	DeleteFile(ctx context.Context, actor auth.Principal, id, fileID string) (eventstore.Appended, error)
	// Now is the clock a container's expiry is read with.
	Now() time.Time
}

// wireContainer is a container as it stands at now: "expired" once idle for its expires_after minutes.
func wireContainer(s *container.State, now time.Time) obj {
	return obj{"id": s.ID, "object": "container", "name": s.Name, "created_at": s.CreatedAt.Unix(), "status": s.Status(now),
		"expires_after":  obj{"anchor": "last_active_at", "minutes": s.ExpiresAfter},
		"last_active_at": s.LastActiveAt.Unix(),
		"memory_limit":   sandboxMemory, "network_policy": obj{"type": "disabled"}}
}

// sandboxMemory is what every container here has, as OpenAI names its memory limits: the sandbox bounds each
// process to 1 GiB (internal/sandbox), and its code has no network.
const sandboxMemory = "1g"

// checkSandboxAsks refuses, naming the field, what a container (a created one, or a response's {"type": "auto"})
// asks of its sandbox that this server cannot give: more memory, network access, skills. Taken silently, the code
// would run with less than it was promised.
func checkSandboxAsks(in fields) error {
	limit, err := in.optStr("memory_limit")
	if err != nil {
		return err
	}
	if limit != nil {
		switch *limit {
		case sandboxMemory:
		case "4g", "16g", "64g":
			return errs.InvalidField(in.param("memory_limit"), "This server's containers have 1 GiB of memory: 'memory_limit' can only be '1g'.")
		default:
			return errs.InvalidField(in.param("memory_limit"), "Invalid value: '%s'. Supported values are: '1g', '4g', '16g' and '64g'.", clip(*limit))
		}
	}
	policy, ok, err := in.object("network_policy")
	if err != nil {
		return err
	}
	if ok {
		typ, err := policy.str("type")
		if err != nil {
			return err
		}
		switch typ {
		case "disabled":
		case "allowlist":
			return errs.InvalidField(policy.param("type"), "This server's containers have no network access: 'network_policy' can only be {\"type\": \"disabled\"}.")
		case "":
			return errs.Missing(policy.param("type"))
		default:
			return errs.InvalidField(policy.param("type"), "Invalid value: '%s'. Supported values are: 'disabled' and 'allowlist'.", clip(typ))
		}
	}
	var skills []json.RawMessage
	if _, err := get(in, "skills", &skills); err != nil {
		return err
	}
	if len(skills) > 0 {
		return errs.InvalidField(in.param("skills"), "Skills are not supported by this server's containers.")
	}
	return nil
}

// expiresAfter reads a container's expires_after, {"anchor": "last_active_at", "minutes": N}; 0 when absent.
func expiresAfter(in fields) (int, error) {
	ea, ok, err := in.object("expires_after")
	if err != nil || !ok {
		return 0, err
	}
	anchor, err := ea.str("anchor")
	if err != nil {
		return 0, err
	}
	switch anchor {
	case "":
		return 0, errs.Missing(ea.param("anchor"))
	case "last_active_at":
	default:
		return 0, errs.InvalidField(ea.param("anchor"), "Invalid value: '%s'. Supported values are: 'last_active_at'.", clip(anchor))
	}
	minutes, err := ea.optInt("minutes")
	if err != nil {
		return 0, err
	}
	if minutes == nil {
		return 0, errs.Missing(ea.param("minutes"))
	}
	if err := container.CheckExpiresAfter(ea.param("minutes"), *minutes); err != nil {
		return 0, err
	}
	return *minutes, nil
}

func wireContainerFile(s *container.State, f container.File) obj {
	return obj{"id": f.FileID, "object": "container.file", "container_id": s.ID, "created_at": f.CreatedAt.Unix(),
		"bytes": f.Bytes, "path": f.Path, "source": f.Source}
}

func (f *Face) createContainer(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	name, err := in.str("name")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if name == "" {
		f.WriteError(w, r, errs.Missing("name"))
		return
	}
	var fileIDs []string
	if _, err := get(in, "file_ids", &fileIDs); err != nil {
		f.WriteError(w, r, err)
		return
	}
	minutes, err := expiresAfter(in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := checkSandboxAsks(in); err != nil {
		f.WriteError(w, r, err)
		return
	}
	// A container is read from its log: one made past the wait is answered as made (shownOrDone).
	id, app, err := f.d.Containers.Create(r.Context(), principal(r), name, fileIDs, minutes)
	if err := f.shownOrDone(r, app, err, projections.Containers{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, id, app.LastSeq())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireContainer(&s, f.d.Containers.Now()))
}

func (f *Face) getContainer(w http.ResponseWriter, r *http.Request) {
	s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "container_id"), eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireContainer(&s, f.d.Containers.Now()))
}

// listContainers pages through the caller's index of containers (projections.Containers) and reads the state of
// only those on the page: their status and last activity move with every use, which the index does not follow.
func (f *Face) listContainers(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := onlyQuery(r, "'after', 'limit', 'order' and 'name'", "after", "before", "limit", "order", "name"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	// The index spans the account's containers: one it has not caught up with is a 503, not a listing without a
	// container just made (projections.Runner.ListCaughtUp).
	if err := f.d.Views.ListCaughtUp(r.Context(), projections.Containers{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	name := r.URL.Query().Get("name")
	account := principal(r).AccountID
	docs, err := projections.ListAll[projections.Listed[projections.ContainerView]](r.Context(), f.d.Views, projections.Containers{}.Name(), account+".*")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[string], 0, len(docs))
	for _, d := range docs {
		if name != "" && d.Obj.Name != name {
			continue
		}
		items = append(items, listed[string]{id: d.Obj.ID, seq: d.Seq, obj: d.Obj.ID})
	}
	ids := paginate(items, p)
	out := page[obj]{Object: ids.Object, Data: make([]obj, 0, len(ids.Data)), FirstID: ids.FirstID, LastID: ids.LastID, HasMore: ids.HasMore}
	now := f.d.Containers.Now()
	for _, id := range ids.Data {
		s, err := f.d.Containers.Get(r.Context(), account, id, eventstore.Fresh)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since the index was read
		}
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		out.Data = append(out.Data, wireContainer(&s, now))
	}
	writeJSON(w, out)
}

func (f *Face) deleteContainer(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "container_id")
	app, err := f.d.Containers.Delete(r.Context(), principal(r), id)
	if err := f.shownOrDone(r, app, err, projections.Containers{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "container.deleted", Deleted: true})
}

// onlyQuery refuses a query parameter other than known (supported names them for the message): a filter not
// applied would answer a different question than asked.
func onlyQuery(r *http.Request, supported string, known ...string) error {
	for k := range r.URL.Query() {
		if !slices.Contains(known, k) {
			return errs.InvalidField(k, "Unrecognized query parameter: '%s'. Supported are %s.", clip(k), supported)
		}
	}
	return nil
}

func (f *Face) listContainerFiles(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := onlyQuery(r, "'after', 'limit' and 'order'", "after", "before", "limit", "order"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "container_id"), eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[obj], 0, len(s.Files))
	for i, file := range s.Files {
		items = append(items, listed[obj]{id: file.FileID, seq: uint64(i), obj: wireContainerFile(&s, file)})
	}
	writeJSON(w, paginate(items, p))
}

// addContainerFile adds a file to a container of the caller's: one of their files by file_id (JSON, or a multipart
// form as OpenAI's clients send it), or a multipart "file", kept as one of their files first. It is the
// container's activity, refused once it expired. The container is loaded once, and that state goes down to the
// command.
func (f *Face) addContainerFile(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "container_id")
	var fileID string
	var s container.State
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		// Checked before an upload is stored: a file for a container that cannot take it is not kept.
		var err error
		if s, err = f.usableContainer(r, id); err != nil {
			f.WriteError(w, r, err)
			return
		}
		form, upload, filename, err := f.readUpload(w, r, "file_id")
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		fileID = form["file_id"]
		if upload.Object != "" {
			if fileID != "" {
				f.discard(r, upload)
				f.WriteError(w, r, errs.InvalidField("file", "Send either 'file' or 'file_id', not both."))
				return
			}
			made, res, err := f.d.Files.Create(r.Context(), principal(r), commands.NewFile{Filename: filename, Purpose: "user_data", Upload: upload})
			if err := f.d.Views.ShowsWrite(r.Context(), res, err, projections.Files{}); err != nil {
				f.WriteError(w, r, err)
				return
			}
			fileID = made
		}
	} else {
		in, err := readFields(r)
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		if fileID, err = in.str("file_id"); err != nil {
			f.WriteError(w, r, err)
			return
		}
		// An expired container is refused after file_id is checked (by the command's decision), as before the
		// container was loaded here.
		if s, err = f.d.Containers.Get(r.Context(), principal(r).AccountID, id, eventstore.Fresh); err != nil {
			f.WriteError(w, r, err)
			return
		}
	}
	file, err := f.d.Containers.AddFile(r.Context(), principal(r), &s, fileID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireContainerFile(&s, file))
}

// usableContainer is a container of the caller's that has not expired.
func (f *Face) usableContainer(r *http.Request, id string) (container.State, error) {
	s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, id, eventstore.Fresh)
	if err != nil {
		return s, err
	}
	if s.Expired(f.d.Containers.Now()) {
		return s, container.ErrExpired("container_id")
	}
	return s, nil
}

func (f *Face) containerFile(r *http.Request) (container.State, container.File, error) {
	s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "container_id"), eventstore.Fresh)
	if err != nil {
		return s, container.File{}, err
	}
	id := chi.URLParam(r, "file_id")
	file, ok := s.File(id)
	if !ok {
		return s, file, container.ErrNoFile(id)
	}
	return s, file, nil
}

func (f *Face) getContainerFile(w http.ResponseWriter, r *http.Request) {
	s, file, err := f.containerFile(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireContainerFile(&s, file))
}

// deleteContainerFile removes a file from a container of the caller's: it leaves the container's listing and its
// /mnt/data (a warm sandbox drops it before its next call), not the caller's files.
func (f *Face) deleteContainerFile(w http.ResponseWriter, r *http.Request) {
	fileID := chi.URLParam(r, "file_id")
	if _, err := f.d.Containers.DeleteFile(r.Context(), principal(r), chi.URLParam(r, "container_id"), fileID); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: fileID, Object: "container.file.deleted", Deleted: true})
}

func (f *Face) containerFileContent(w http.ResponseWriter, r *http.Request) {
	_, file, err := f.containerFile(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	d, err := f.file(r, file.FileID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	body, _, err := f.d.Blobs.Get(r.Context(), d.Blob)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	defer body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	if _, err := io.Copy(w, body); err != nil {
		f.d.Logger.Warn("send container file content", "file", d.ID, "err", err)
	}
}

// checkContainer checks a code_interpreter tool's container: the caller's container by ID, or
// {"type": "auto", "file_ids"} with the caller's files.
func (f *Face) checkContainer(r *http.Request, at string, t events.ResponseTool) error {
	if f.d.CodeAvailable != nil {
		if err := f.d.CodeAvailable(); err != nil {
			return errs.InvalidField(at+".type", "The code_interpreter tool cannot run on this server: %v", err)
		}
	}
	var id string
	if decodeValue(t.Container, at+".container", &id) == nil {
		if err := ids.Check(at+".container", ids.Container, id); err != nil {
			return err
		}
		s, err := f.d.Containers.Get(r.Context(), principal(r).AccountID, id, eventstore.Fresh)
		if err != nil {
			if e := errs.As(err); e != nil && e.Code == errs.NotFound {
				e.Field = at + ".container"
			}
			return err
		}
		if s.Expired(f.d.Containers.Now()) {
			return container.ErrExpired(at + ".container")
		}
		return nil
	}
	var o struct {
		Type    string   `json:"type"`
		FileIDs []string `json:"file_ids"`
	}
	if err := decodeValue(t.Container, at+".container", &o); err != nil {
		return err
	}
	if o.Type != "auto" {
		return errs.InvalidField(at+".container.type", "Invalid value: '%s'. Supported values are: 'auto'.", clip(o.Type))
	}
	asks, err := parseFields(t.Container)
	if err != nil {
		return err
	}
	asks.prefix = at + ".container."
	if err := checkSandboxAsks(asks); err != nil {
		return err
	}
	for j, id := range o.FileIDs {
		if err := f.d.Responses.CheckFile(r.Context(), principal(r).AccountID, fmt.Sprintf("%s.container.file_ids[%d]", at, j), id); err != nil {
			return err
		}
	}
	return nil
}
