import { translateRequest } from '@switchyard/translate';

const chat = {
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
  tools: [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ],
  temperature: 0.2,
  logit_bias: { 50256: -100 },
};
const { body, dropped } = translateRequest('openai-chat', 'gemini', chat, { model: 'gemini-2.5-flash', stream: false });
console.log(JSON.stringify(body));
console.log('dropped:', dropped.join(', '));
