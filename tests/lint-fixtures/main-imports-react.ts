// lint-as: src-main/plane/bad.lint-fixture.ts
// expect: UI packages belong to the renderer
import { useState } from 'react';
export const x = useState;
