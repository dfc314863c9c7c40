module github.com/ferry-php/ferry

go 1.26.8

require (
	github.com/andybalholm/brotli v1.1.1
	github.com/klauspost/compress v1.17.11
	github.com/valyala/fasthttp v1.58.0
	google.golang.org/protobuf v1.36.12
	gopkg.in/yaml.v3 v3.0.1
)

require github.com/valyala/bytebufferpool v1.0.0 // indirect
