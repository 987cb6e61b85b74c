module distill.dev/services/extractor

go 1.26.0

require (
	distill.dev/proto v0.0.0
	github.com/JohannesKaufmann/html-to-markdown/v2 v2.5.2
	github.com/PuerkitoBio/goquery v1.13.0
	github.com/andybalholm/cascadia v1.3.4
	github.com/dlclark/regexp2/v2 v2.5.1
	github.com/tiktoken-go/tokenizer v0.10.0
	golang.org/x/net v0.60.0
	golang.org/x/text v0.42.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/JohannesKaufmann/dom v0.3.1 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
)

replace distill.dev/proto => ../../proto
