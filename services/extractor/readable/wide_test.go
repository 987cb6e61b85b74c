package readable

import (
	"context"
	"slices"
	"strings"
	"testing"

	"distill.dev/services/extractor/internal/htmlnode"
)

// TestWideKeepsAThreadInAForm: forum engines wrap a thread's posts in a
// form for quoting several at once; the search form beside it is chrome.
func TestWideKeepsAThreadInAForm(t *testing.T) {
	t.Parallel()
	page := `<html><body>
<header><a href="/">Case Makers Forum</a><form action="/search"><input name="q"><button>Search</button></form></header>
<div class="layout">
<div class="sidebar"><p>` + prose("sidebar", 6) + `</p></div>
<form action="/topic/42/multiquote" method="post">
 <article class="post"><div class="author">rabbids</div><p>What are the two ports under the power supply for? The manual says nothing about them, and they both look deliberate.</p></article>
 <article class="post"><div class="author">devbiker</div><p>The rear one is said to be for linking external lighting controllers; the one by the fans I have not seen explained.</p></article>
</form>
</div>
<footer>© Case Makers</footer>
</body></html>`
	content, err := ArticleOf(context.Background(), parse(t, page), Page{Type: TypeForum})
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	for _, want := range []string{"two ports under the power supply", "external lighting controllers"} {
		if !strings.Contains(text, want) {
			t.Errorf("content lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Search") {
		t.Errorf("the search form stayed:\n%s", text)
	}
}

// TestWideKeepsTheHeroBanner: a landing page's opening pitch sits in a
// "banner"; an article's banner advert still goes.
func TestWideKeepsTheHeroBanner(t *testing.T) {
	t.Parallel()
	landing := `<html><body><header><nav><a href="/">Home</a><a href="/rent">Rentals</a></nav></header>
<main><section class="banner has-hover"><div class="banner-inner"><div class="text-box"><h1>Gym equipment for film sets and events</h1>
<p>Treadmills, racks and rowers delivered to your set or booth anywhere in the county, with setup and pickup included.</p></div></div></section>
<section><h2>Rental periods</h2><p>By the day, the week or the month, with one price for delivery and pickup.</p></section>
<section><h2>Brands</h2><p>Commercial machines from the makers gyms use, serviced between rentals and cleaned before every delivery.</p></section>
<section><h2>Delivery</h2><p>Our own crew brings the equipment, sets it up where you want it and takes it away when you are done.</p></section></main>
<footer>© Rent-a-Gym</footer></body></html>`
	content, err := ArticleOf(context.Background(), parse(t, landing), Page{Type: TypeService})
	if err != nil {
		t.Fatal(err)
	}
	if text := htmlnode.Text(content); !strings.Contains(text, "Treadmills, racks and rowers") || !strings.Contains(text, "By the day") {
		t.Errorf("the hero banner went:\n%s", text)
	}

	article := `<html><body><article><h1>Rowing technique</h1><p>` + prose("rowing", 4) + `</p>
<div class="banner ad-slot"><p>Summer sale: rowers from 299</p></div><p>` + prose("rowing two", 4) + `</p></article></body></html>`
	content, err = ArticleOf(context.Background(), parse(t, article), Page{Type: TypeArticle})
	if err != nil {
		t.Fatal(err)
	}
	if text := htmlnode.Text(content); strings.Contains(text, "Summer sale") || !strings.Contains(text, "rowing two") {
		t.Errorf("the article's banner advert stayed, or its text went:\n%s", text)
	}
}

// TestWideWeighsNamesAgainstProse: in a wide draw a name marks chrome
// unless the element holds running text; a list of links so named goes.
func TestWideWeighsNamesAgainstProse(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Payroll for clinics</h1>
<div class="cmp-promo-container"><h2>Run payroll in minutes</h2>
<p>` + prose("payroll", 3) + `</p><p>` + prose("payroll two", 2) + `</p></div>
<section><h2>Compliance</h2><p>` + prose("compliance", 4) + `</p></section>
<section><h2>Support</h2><p>` + prose("support", 4) + `</p></section>
<div class="related-links"><a href="/a">Payroll for dentists and their practices</a> <a href="/b">Payroll for vets and animal hospitals</a> <a href="/c">Payroll for pharmacies</a></div>
</main></body></html>`
	content, err := ArticleOf(context.Background(), parse(t, page), Page{Type: TypeService})
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	if !strings.Contains(text, "The payroll two report") || !strings.Contains(text, "The compliance report") {
		t.Errorf("the promo container's text went:\n%s", text)
	}
	if strings.Contains(text, "Payroll for vets") {
		t.Errorf("the related links stayed:\n%s", text)
	}
}

// TestWideKeepsPromoCards: a service page lists its offers as "promo"
// cards, each a link round a heading and a line; an article's promo box
// still goes.
func TestWideKeepsPromoCards(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Our services</h1><p>` + prose("services", 3) + `</p>
<div class="promo-container">
<a class="cmp-promo" href="/audit"><div class="cmp-promo__content"><h3>Audit</h3><div class="cmp-promo__desc">External audits that help clients address risk and strengthen their reporting.</div></div></a>
<a class="cmp-promo" href="/tax"><div class="cmp-promo__content"><h3>Tax</h3><div class="cmp-promo__desc">Planning and compliance for companies, their owners and their people.</div></div></a>
</div></main></body></html>`
	content, err := ArticleOf(context.Background(), parse(t, page), Page{Type: TypeService})
	if err != nil {
		t.Fatal(err)
	}
	if text := htmlnode.Text(content); !strings.Contains(text, "External audits that help") || !strings.Contains(text, "Planning and compliance") {
		t.Errorf("the promo cards went:\n%s", text)
	}

	article := `<html><body><article><h1>Rowing technique</h1><p>` + prose("rowing", 4) + `</p>
<div class="promo"><a href="/shop">Rowers from 299, this week only</a></div><p>` + prose("rowing two", 4) + `</p></article></body></html>`
	content, err = ArticleOf(context.Background(), parse(t, article), Page{Type: TypeArticle})
	if err != nil {
		t.Fatal(err)
	}
	if text := htmlnode.Text(content); strings.Contains(text, "Rowers from 299") || !strings.Contains(text, "rowing two") {
		t.Errorf("the article's promo stayed, or its text went:\n%s", text)
	}
}

// A wide draw is planned before the block model featurizes the page, so
// only the blocks it keeps are featurized: each as it would be were all of
// them, from the page as it stands before the draw.
func TestWidePlanFeaturizesTheBlocksItKeepsAlike(t *testing.T) {
	t.Parallel()
	doc := parse(t, fingerprintPage)
	body := htmlnode.First(doc, "body")
	st := measure(body)
	page := Page{Type: TypeProduct}
	all := segment(body, st, page, titleWords(doc), false, nil)
	plan := planWide(body, st, false)
	some := segment(body, st, page, titleWords(doc), false, plan.keeps)
	if len(some) != len(all) {
		t.Fatalf("%d blocks with the plan, %d without", len(some), len(all))
	}
	kept, skipped := 0, 0
	for i := range all {
		if !plan.keeps(all[i].n) {
			if some[i].feats != nil {
				t.Errorf("block %q, outside the draw, was featurized", blockText(all[i].n))
			}
			skipped++
			continue
		}
		kept++
		if !slices.Equal(some[i].feats, all[i].feats) || some[i].kept != all[i].kept || some[i].words != all[i].words {
			t.Errorf("block %q featurized otherwise with the plan", blockText(all[i].n))
		}
	}
	if kept == 0 || skipped == 0 {
		t.Errorf("the plan kept %d blocks and passed over %d: the page should have both", kept, skipped)
	}
	content := plan.draw(st)
	for i := range all {
		if in := htmlnode.Contains(content, all[i].n); in && !plan.keeps(all[i].n) {
			t.Errorf("block %q is in the draw but was not featurized", blockText(all[i].n))
		}
	}
}
