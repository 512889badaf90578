// The olm-py console's only script (served from the console: the Content-Security-Policy
// allows no inline script). Progressive: every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Catalog filters: choosing a value applies it.
  for (const select of document.querySelectorAll("select.autosubmit")) {
    select.addEventListener("change", () => select.form.submit());
  }
  // Buttons that delete ask first.
  for (const button of document.querySelectorAll("[data-confirm]")) {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
  // The install form: the version list shows the chosen channel's versions only.
  const form = document.getElementById("install-form");
  if (form) {
    const channel = form.elements.namedItem("channel");
    const version = form.elements.namedItem("starting_csv");
    const sync = () => {
      for (const option of version.options) {
        option.hidden = Boolean(option.dataset.channel) && option.dataset.channel !== channel.value;
      }
      if (version.selectedOptions[0] && version.selectedOptions[0].hidden) version.value = "";
    };
    channel.addEventListener("change", sync);
    sync();
  }
});
