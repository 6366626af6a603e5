/* Syntax colours for Python cells, each at least 4.5:1 against the white editor
 * background (WCAG AA), unlike the editor's default palette. */
import { HighlightStyle } from "@codemirror/language";
import { tags as t } from "@lezer/highlight";

export const lessonHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: "#7a1fa2" },
  { tag: [t.bool, t.null, t.atom], color: "#1d4ed8" },
  { tag: [t.number, t.literal], color: "#0f6a3a" },
  { tag: [t.string, t.special(t.string), t.escape, t.regexp], color: "#a3261b" },
  { tag: t.comment, color: "#5f6368", fontStyle: "italic" },
  { tag: [t.definition(t.variableName), t.function(t.definition(t.variableName))], color: "#1f4f99" },
  { tag: [t.className, t.definition(t.className), t.typeName], color: "#8a4500" },
  { tag: t.standard(t.variableName), color: "#0b6670" },
  { tag: t.invalid, color: "#b3261e", textDecoration: "underline" },
]);
