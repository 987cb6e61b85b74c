module distill.dev/services/extractor/pdf/testdata/gen

go 1.26.0

require github.com/go-pdf/fpdf v0.9.0
