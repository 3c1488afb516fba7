(function () {
  "use strict";
  var table = document.getElementById("repos");
  if (!table || !table.tBodies.length) { return; }
  var body = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  function key(row, index) {
    var cell = row.cells[index];
    var value = cell ? (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent) : "";
    var number = Number(value);
    return value !== "" && !isNaN(number) ? number : value.toLowerCase();
  }
  heads.forEach(function (th, index) {
    var button = th.querySelector("button");
    if (!button) { return; }
    button.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, index), y = key(b, index);
        var order = x < y ? -1 : (x > y ? 1 : 0);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  var wanted = new URLSearchParams(window.location.hash.slice(1)).get("sort");
  heads.forEach(function (th) {
    var button = th.querySelector("button");
    if (button && wanted !== null && th.dataset.col === wanted.replace(/^-/, "")) {
      button.click();
      if (wanted.charAt(0) === "-") { button.click(); }
    }
  });
})();
