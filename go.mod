module github.com/contrailhq/contrail

go 1.26.0

require (
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
)
