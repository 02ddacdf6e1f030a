/* The course book's behaviour, on top of sphinx-book-theme. Loaded by conf.py (html_js_files); the browser tests
   (tests/test_browser_layout.py) check each part at 1280 px and on a 390-px phone. */
"use strict";

/* 1. The sidebar buttons. sphinx-book-theme 1.4.0 and pydata-sphinx-theme 0.20.0 (the pair pip installs: the book
   theme pins it) attach their sidebar toggling to document.querySelector(".primary-toggle") -- the *first* such
   button in the page, the base theme's navbar button, which the book theme hides -- and the same for
   ".secondary-toggle". The buttons a reader sees, "Toggle primary sidebar" and "Toggle secondary sidebar" in the
   article's header, get no listener and did nothing at any width (the themes' split is discussed in
   executablebooks/sphinx-book-theme#865 and pydata/pydata-sphinx-theme#2067). A click on any other toggle is
   passed on to the first one, whose listeners do what the themes intend: on a wide screen the book theme hides or
   shows the sidebar, on a narrow one the base theme opens it as a dialog. */
function forwardSidebarToggles() {
  for (const kind of ["primary", "secondary"]) {
    const buttons = [...document.querySelectorAll(`.${kind}-toggle`)];
    const first = buttons[0];
    for (const button of buttons.slice(1)) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        first.click();
      });
    }
  }
}

/* 2. Collapsed sections. A heading that is collapsed in JupyterLab (its cell's metadata has
   jp-MarkdownHeadingCollapsed: true, as every chapter's "How sure are we?") is collapsed in the book too:
   vrs_edu.course.book_build marks its cell with <div class="vrs-collapsed"></div>, and here everything in its
   section after the heading moves into a <details> element, closed, with a summary that says how to open it.
   A link into the section (a search result, a #anchor) opens it. Without JavaScript the section stays open. */
function foldCollapsedSections() {
  for (const marker of document.querySelectorAll("div.vrs-collapsed")) {
    const section = marker.closest("section");
    if (!section) continue;
    const heading = section.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4");
    if (!heading) continue;
    const details = document.createElement("details");
    details.className = "vrs-fold";
    const summary = document.createElement("summary");
    summary.textContent = document.documentElement.lang === "ko"   // the Korean book (한국어판)
      ? "접힌 절: 눌러서 엽니다" : "Folded: click to open this section";
    details.appendChild(summary);
    for (const node of [...section.childNodes]) {
      if (node !== heading) details.appendChild(node);
    }
    marker.remove();
    heading.after(details);
  }
  const openTarget = () => {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    const fold = target && target.closest("details.vrs-fold");
    if (fold) {
      fold.open = true;
      target.scrollIntoView();
    }
  };
  openTarget();
  window.addEventListener("hashchange", openTarget);
}

/* 3. Search results with their context, offline. Sphinx's search page finds every word of the book (searchindex.js)
   and shows the sentence around a match by fetching the page, a fetch that a browser refuses for a book opened
   from disk (file://): the results were bare titles. vrs_edu.course.book_build writes every page's main text into
   _static/vrs_pages.js; on a file:// search page, the fetch of one of the book's pages is answered from it. Runs
   when the script loads (before the search starts at DOMContentLoaded). */
function answerPageFetchesOffline() {
  if (window.location.protocol !== "file:" || !window.location.pathname.endsWith("/search.html")) return;
  const root = new URL(document.documentElement.dataset.content_root || "./", window.location.href);
  const pages = new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = new URL("_static/vrs_pages.js", root).href;
    script.onload = () => resolve(window.VRS_PAGES || {});
    script.onerror = () => resolve({});
    document.head.appendChild(script);
  });
  const fetchFromNetwork = window.fetch.bind(window);
  window.fetch = (resource, options) => {
    const url = new URL(resource instanceof Request ? resource.url : resource, window.location.href);
    if (url.protocol !== "file:" || !url.pathname.startsWith(root.pathname)) return fetchFromNetwork(resource, options);
    return pages.then((texts) => {
      const html = texts[url.pathname.slice(root.pathname.length)];
      return html === undefined ? fetchFromNetwork(resource, options)
        : new Response(html, {headers: {"Content-Type": "text/html"}});
    });
  };
}
answerPageFetchesOffline();

document.addEventListener("DOMContentLoaded", () => {
  forwardSidebarToggles();
  foldCollapsedSections();
});
