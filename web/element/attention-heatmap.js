// attention-heatmap.js - defines <attention-heatmap>. Importing this module is the side effect.
//
//   <script type="module" src="/attnmap/web/element/attention-heatmap.js"></script>
//   <attention-heatmap tokens="猫 吃 鱼" q="[[1.0,0.2,0.1,0.0],…]" k="[[0.9,0.1,0.0,0.2],…]"></attention-heatmap>
//
// The class itself, without defining anything, is in attention-heatmap-element.js.
import { AttentionHeatmapElement } from './attention-heatmap-element.js';

export { AttentionHeatmapElement };

// Defining twice throws; a page that loads the module from two URLs keeps the first definition.
if (typeof customElements === 'object' && !customElements.get('attention-heatmap')) {
  customElements.define('attention-heatmap', AttentionHeatmapElement);
}
