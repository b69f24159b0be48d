package platform

import (
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/openaiapi"
	"github.com/contrailhq/contrail/projections"
)

// allProjections lists every read model. A new read model adds itself here.
func allProjections() []projections.Projection {
	return []projections.Projection{
		projections.Accounts{},
		projections.Assistants{}, projections.Threads{}, projections.Messages{}, projections.Runs{},
		projections.RunSteps{}, projections.Files{},
	}
}

// handlers lists every reactor of the log. A new handler adds itself here.
func (p *Platform) handlers() []runtime.Handler {
	return []runtime.Handler{
		p.RunWorker.Handler(),
	}
}

// faces lists every HTTP face. A new face adds itself here.
func (p *Platform) faces() []httpapi.Face {
	return []httpapi.Face{
		adminapi.New(adminapi.Deps{
			Commands: p.Commands, Views: p.Views, JS: p.JS, Store: p.Store, Names: p.Layout.Names, Logger: p.Logger,
		}),
		openaiapi.New(openaiapi.Deps{
			Commands: p.Commands, Views: p.Views, Store: p.Store, JS: p.JS, NC: p.NC, Names: p.Layout.Names, Blobs: p.Blobs,
			Models: p.Models, Logger: p.Logger.With("face", "v1"),
		}),
	}
}
