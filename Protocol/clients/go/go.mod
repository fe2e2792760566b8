module github.com/entitled-dev/entitled/Protocol/clients/go

go 1.19
