module distill.dev/gateway

go 1.26.0

require distill.dev/proto v0.0.0

replace distill.dev/proto => ../proto
