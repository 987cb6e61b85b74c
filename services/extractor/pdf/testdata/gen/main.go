// Command gen writes the PDF fixtures of package pdf. It is its own module
// under testdata so that the PDF writer it uses never becomes a dependency
// of the extractor. Run it from this directory:
//
//	GOWORK=off go run . -out .. -font /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
//
// The font (Debian's fonts-dejavu-core) is only read: the Greek fixture
// embeds the subset of it that its text uses.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/go-pdf/fpdf"
)

// fixed keeps the fixtures byte-stable across runs.
var fixed = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func main() {
	out := flag.String("out", "..", "directory to write the fixtures to")
	font := flag.String("font", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "a TrueType font with Greek glyphs")
	flag.Parse()
	fontBytes, err := os.ReadFile(*font)
	if err != nil {
		log.Fatal(err)
	}
	twoCol, err := render(twoColumns())
	if err != nil {
		log.Fatal(err)
	}
	files := map[string][]byte{"two-column.pdf": twoCol}
	for name, doc := range map[string]*fpdf.Fpdf{
		"scan.pdf":      scan(),
		"greek.pdf":     greek(fontBytes),
		"encrypted.pdf": encrypted(),
		"pages.pdf":     pages(),
	} {
		b, err := render(doc)
		if err != nil {
			log.Fatal(fmt.Errorf("%s: %w", name, err))
		}
		files[name] = b
	}
	// A download cut short: the header and the first objects, no
	// cross-reference table, no trailer, no page tree.
	files["truncated.pdf"] = twoCol[:len(twoCol)/3]
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func newDoc() *fpdf.Fpdf {
	f := fpdf.New("P", "pt", "A4", "")
	f.SetCreationDate(fixed)
	f.SetModificationDate(fixed)
	f.SetCatalogSort(true)
	f.SetAutoPageBreak(false, 0)
	return f
}

func render(f *fpdf.Fpdf) ([]byte, error) {
	var b bytes.Buffer
	err := f.Output(&b)
	return b.Bytes(), err
}

// twoColumns is a paper: a title and author line across the page, then two
// columns with a bold section heading each. The right column is written to
// the content stream first, so that only layout, not stream order, puts the
// left column first.
func twoColumns() *fpdf.Fpdf {
	f := newDoc()
	f.SetTitle("Sparse Lattices in Practice", false)
	f.SetAuthor("Ada Example", false)
	f.AddPage()
	f.SetFont("Helvetica", "B", 20)
	f.SetXY(56, 60)
	f.CellFormat(483, 24, "Sparse Lattices in Practice", "", 0, "C", false, 0, "")
	f.SetFont("Helvetica", "", 11)
	f.SetXY(56, 90)
	f.CellFormat(483, 14, "Ada Example, Institute of Examples", "", 0, "C", false, 0, "")

	column := func(x float64, heading string, paras []string) {
		f.SetXY(x, 130)
		f.SetFont("Helvetica", "B", 14)
		f.MultiCell(230, 18, heading, "", "L", false)
		f.SetFont("Helvetica", "", 10)
		for _, p := range paras {
			f.SetX(x)
			f.MultiCell(230, 13, p, "", "L", false)
			f.SetX(x)
			f.Ln(8)
		}
	}
	column(309, "2 Method", []string{
		"RIGHTSTART The method walks the lattice once and keeps only the cells that carry weight, so the memory it needs grows with the answer and not with the grid.",
		"Each step merges neighbouring cells whose weights agree within a tolerance, which keeps the walk short on smooth inputs. RIGHTEND",
	})
	column(56, "1 Introduction", []string{
		"LEFTSTART Lattices appear wherever a problem is cut into regular cells: images, simulations and the tables behind many measurements.",
		"Most cells of a large lattice are empty in practice, and storing them wastes memory that a sparse layout can spend on the cells that matter. LEFTEND",
	})
	return f
}

// scan is a page that holds only an image, as a scanner makes it: no text
// layer at all.
func scan() *fpdf.Fpdf {
	f := newDoc()
	f.AddPage()
	img := image.NewGray(image.Rect(0, 0, 120, 170))
	for y := range 170 {
		for x := range 120 {
			c := uint8(245)
			// Grey bars where lines of print would be.
			if y > 20 && y < 150 && (y/6)%2 == 0 && x > 12 && x < 108 {
				c = 60
			}
			img.SetGray(x, y, color.Gray{Y: c})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		log.Fatal(err)
	}
	f.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "PNG"}, &b)
	f.ImageOptions("scan", 0, 0, 595, 842, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	return f
}

// greek is a short Greek text in an embedded subset of a TrueType font,
// with its title and author in Greek too.
func greek(font []byte) *fpdf.Fpdf {
	f := newDoc()
	f.SetTitle("Η γλώσσα των αριθμών", true)
	f.SetAuthor("Ελένη Παπαδοπούλου", true)
	f.AddUTF8FontFromBytes("dejavu", "", font)
	f.AddPage()
	f.SetFont("dejavu", "", 22)
	f.SetXY(56, 60)
	f.MultiCell(483, 28, "Η γλώσσα των αριθμών", "", "L", false)
	f.SetFont("dejavu", "", 11)
	f.SetX(56)
	f.MultiCell(483, 15, "Οι αριθμοί είναι η κοινή γλώσσα της επιστήμης. Κάθε μέτρηση γράφεται με αυτούς, και κάθε απόδειξη στηρίζεται σε αυτούς.", "", "L", false)
	return f
}

// pages is three pages of body text in one font: nothing marks a heading.
func pages() *fpdf.Fpdf {
	f := newDoc()
	for i := 1; i <= 3; i++ {
		f.AddPage()
		f.SetFont("Helvetica", "", 11)
		f.SetXY(56, 60)
		f.MultiCell(483, 15, fmt.Sprintf("PAGE%dSTART The tide tables for this stretch of coast are kept by the harbour office and printed each spring.", i), "", "L", false)
		f.SetX(56)
		f.Ln(10)
		f.SetX(56)
		f.MultiCell(483, 15, fmt.Sprintf("Boats leaving at low water should check the channel markers first; the sandbanks move after every storm. PAGE%dEND", i), "", "L", false)
	}
	return f
}

// encrypted asks for a password before it shows anything.
func encrypted() *fpdf.Fpdf {
	f := newDoc()
	f.SetProtection(fpdf.CnProtectPrint, "secret", "owner")
	f.AddPage()
	f.SetFont("Helvetica", "", 12)
	f.Text(56, 80, "Only readers with the password see this line.")
	return f
}
