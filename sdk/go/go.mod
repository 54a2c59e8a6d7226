module rentapi/sdk/go

go 1.24
