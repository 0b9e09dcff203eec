module gkconv

go 1.26

require (
	github.com/spf13/cobra v1.10.2
	google.golang.org/protobuf v1.36.12
	gopkg.in/ini.v1 v1.67.3
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
