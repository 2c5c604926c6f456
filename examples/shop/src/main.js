// The shop's page: ask the API for the catalogue, wait for it, then render one card per
// product. The images are named by the API, so the largest paint (LCP) waits for it.
(function () {
  "use strict";
  var grid = document.getElementById("products");
  var status = document.getElementById("status");
  var price = new Intl.NumberFormat("en-GB", { style: "currency", currency: "EUR" });

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function card(product) {
    var article = el("article", "card");
    var img = el("img", "card__image");
    img.src = product.image;
    img.width = 240;
    img.height = 180;
    img.alt = product.name;
    article.append(img, el("h2", "card__name", product.name), el("p", "card__text", product.summary));
    var footer = el("footer", "card__footer");
    footer.append(el("span", "card__price", price.format(product.price_cents / 100)),
                  el("button", "button button--primary", Shop.t("cart.add")));
    article.append(footer);
    return article;
  }

  fetch("/api/products", { credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.json();
    })
    .then(function (catalogue) {
      grid.replaceChildren.apply(grid, catalogue.products.map(card));
      status.textContent = Shop.t("catalogue.count").replace("{n}", catalogue.products.length);
      document.documentElement.dataset.rendered = String(catalogue.products.length);
    })
    .catch(function (error) {
      status.textContent = Shop.t("catalogue.error") + " (" + error.message + ")";
      document.documentElement.dataset.rendered = "error";
    });
})();
