module github.com/contrailhq/contrail

go 1.26
