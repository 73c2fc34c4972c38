/**
 * The simulator classifier's lexicon: weighted patterns per moderation category, matched against
 * the canonical text (see normalize_text.ts).
 *
 * Pattern syntax: slots separated by " + " must match in order, with a space (or nothing: glued
 * words match too) between them. A slot lists phrases separated by "|"; a phrase is words
 * separated by spaces, where `word*` is any word starting with `word` and `@group` any phrase of
 * a group below. A slot ending in "?" may be left out; the slot "~" stands for up to three other
 * words. Each letter also matches a run of itself ("kiiill" matches "kill").
 * Weights add up per category (a negative weight is a benign context that cancels evidence); the
 * sum s becomes the score 1 - e^(-s).
 */
import type { ModerationCategory } from "../../config/types.ts";

/** One pattern and the evidence it gives for each category. */
export interface LexiconEntry {
  pattern: string;
  weights: Partial<Record<ModerationCategory, number>>;
}

/** Word groups that patterns refer to as `@name`. */
export const GROUPS: Record<string, readonly string[]> = {
  kill: [
    "kill*",
    "murder*",
    "shoot*",
    "stab",
    "stabs",
    "stabbed",
    "stabbing",
    "slaughter*",
    "strangl*",
    "behead*",
    "butcher*",
    "exterminat*",
    "lynch*",
  ],
  harm: ["hurt*", "beat up", "punch*", "smash*", "torture*", "strangle*"],
  you: ["you", "u", "ya", "yall", "your family", "your kids"],
  self: ["myself", "my self", "me"],
  iwill: [
    "i will",
    "i shall",
    "ill",
    "i wanna",
    "i want to",
    "im gonna",
    "im going to",
    "i am going to",
    "i plan to",
    "im about to",
    "we will",
    "well",
    "we are going to",
    "were going to",
    "were gonna",
  ],
  people: [
    "immigrants",
    "refugees",
    "migrants",
    "foreigners",
    "jews",
    "muslims",
    "christians",
    "hindus",
    "sikhs",
    "atheists",
    "gays",
    "lesbians",
    "trans",
    "transgender",
    "women",
    "men",
    "blacks",
    "whites",
    "asians",
    "latinos",
    "mexicans",
    "arabs",
    "africans",
    "gypsies",
    "roma",
    "disabled",
  ],
  vermin: [
    "vermin",
    "animals",
    "parasites",
    "cockroaches",
    "rats",
    "subhuman*",
    "savages",
    "scum",
    "filth",
    "inferior",
    "a disease",
    "a plague",
    "monkeys",
    "apes",
  ],
  insult: [
    "idiot*",
    "moron*",
    "loser*",
    "stupid",
    "dumb",
    "worthless",
    "pathetic",
    "useless",
    "ugly",
    "disgusting",
    "retard*",
    "imbecile*",
    "failure",
    "waste of space",
    "piece of shit",
    "trash",
  ],
  sexword: ["sex", "sexy", "sexual*", "nude*", "naked", "porn*", "erotic*"],
  minor: [
    "child*",
    "kid*",
    "minor*",
    "underage*",
    "preteen*",
    "toddler*",
    "schoolgirl*",
    "schoolboy*",
    "infant*",
    "little girl*",
    "little boy*",
  ],
  suicide: [
    "kill myself",
    "commit suicide",
    "end my life",
    "take my own life",
    "hang myself",
    "cut myself",
    "hurt myself",
    "overdose",
    "od",
    "slit my wrists",
    "die",
  ],
};

/** Words that, among the three before a match, negate it ("I would never hurt you"). */
export const NEGATORS: ReadonlySet<string> = new Set([
  "no",
  "not",
  "never",
  "dont",
  "doesnt",
  "didnt",
  "wont",
  "wouldnt",
  "cant",
  "cannot",
  "couldnt",
  "shouldnt",
  "isnt",
  "arent",
  "wasnt",
  "without",
  "stop",
  "against",
  "prevent",
  "prevention",
]);

/** How much a negated match still counts. */
export const NEGATED_WEIGHT = 0.2;

export const LEXICON: readonly LexiconEntry[] = [
  // violence
  { pattern: "@kill", weights: { violence: 0.6 } },
  { pattern: "@harm", weights: { violence: 0.25 } },
  { pattern: "attack*|assault*|ambush*", weights: { violence: 0.35 } },
  { pattern: "bomb*|explosive*|grenade*|detonat*", weights: { violence: 0.45 } },
  { pattern: "gun|guns|rifle*|shotgun*|knife|machete", weights: { violence: 0.2 } },
  {
    pattern: "massacre*|genocide|terroris*|mass shooting|bloodbath|carnage",
    weights: { violence: 0.9 },
  },
  {
    pattern: "how to|ways to + make|build + a? + bomb*|explosive*|pipe bomb*",
    weights: { violence: 1.6 },
  },
  { pattern: "@iwill + @kill|@harm", weights: { violence: 1.0 } },
  { pattern: "rape*", weights: { violence: 0.8, sexual: 0.8 } },
  {
    pattern: "@kill|@harm + @you",
    weights: { violence: 0.9, harassment: 0.9, "harassment/threatening": 1.5 },
  },
  {
    pattern: "you are dead|youre dead|you will die|youll die|watch your back|i know where you live",
    weights: { harassment: 0.8, "harassment/threatening": 1.4, violence: 0.5 },
  },
  {
    pattern: "@iwill + find|get|come for + @you",
    weights: { harassment: 0.6, "harassment/threatening": 1.0 },
  },
  // benign contexts for violent words; harm to oneself counts as self-harm instead
  {
    pattern: "@kill|@harm + myself|yourself|himself|herself|themselves",
    weights: { violence: -1.4 },
  },
  {
    pattern: "kill* + the|this|that|a? + process*|task*|job*|thread*|server*|container*|app|bug*",
    weights: { violence: -1.6 },
  },
  { pattern: "killer + app|feature|whale*|deal|view", weights: { violence: -0.6 } },
  { pattern: "heart|panic|asthma + attack*", weights: { violence: -0.35 } },
  {
    pattern: "shoot* + a|the? + photo*|video*|film|movie|scene|hoops",
    weights: { violence: -0.6 },
  },
  { pattern: "photo|video|film + shoot*", weights: { violence: -0.6 } },
  // violence/graphic
  { pattern: "blood|bloody|bleeding", weights: { "violence/graphic": 0.3 } },
  {
    pattern: "gore|gory|guts|entrails|intestines|corpse*|severed|mangled",
    weights: { "violence/graphic": 0.7, violence: 0.2 },
  },
  {
    pattern: "dismember*|decapitat*|disembowel*|mutilat*|eviscerat*|skinned alive",
    weights: { "violence/graphic": 1.3, violence: 0.6 },
  },
  {
    pattern: "pool of blood|covered in blood|soaked in blood|blood everywhere|blood splatter*",
    weights: { "violence/graphic": 0.9 },
  },
  { pattern: "ripped|torn|blown + open|apart", weights: { "violence/graphic": 0.5 } },
  {
    pattern: "brains|bones|skull + ~ + splatter*|crush*|shatter*",
    weights: { "violence/graphic": 1.0 },
  },
  // harassment
  { pattern: "@insult", weights: { harassment: 0.35 } },
  {
    pattern: "you are|youre|ur|you r + a|an|such a|so? + @insult",
    weights: { harassment: 1.3 },
  },
  { pattern: "@you + @insult", weights: { harassment: 0.9 } },
  { pattern: "shut up|get lost|screw you", weights: { harassment: 0.6 } },
  {
    pattern: "nobody|no one + likes|loves|cares about|wants + you",
    weights: { harassment: 1.4 },
  },
  { pattern: "everyone|everybody + hates + you", weights: { harassment: 1.4 } },
  { pattern: "fuck you|fuck off|fucking idiot", weights: { harassment: 1.1 } },
  {
    pattern: "fuck*|shit|shitty|bitch*|bastard*|asshole*|cunt*|dick|dickhead*|prick|pricks|twat*",
    weights: { harassment: 0.3 },
  },
  {
    pattern: "kill yourself|kys|go die|drink bleach",
    weights: { harassment: 1.5, "harassment/threatening": 0.6, "self-harm": 0.7 },
  },
  // hate
  { pattern: "@people + are|is + @vermin", weights: { hate: 2.0, harassment: 0.6 } },
  {
    pattern: "i|we + hate|despise|cant stand + all? + @people",
    weights: { hate: 1.4, harassment: 0.4 },
  },
  {
    pattern: "death to|kill|exterminate|gas|wipe out|purge + all|the? + @people",
    weights: { "hate/threatening": 2.2, hate: 1.4, violence: 1.2 },
  },
  {
    pattern:
      "@people + should|must|deserve to + die|be killed|be exterminated|be wiped out|be shot",
    weights: { "hate/threatening": 2.2, hate: 1.4, violence: 1.0 },
  },
  {
    pattern: "@people + ~ + dont belong|do not belong|should go back|go back to where",
    weights: { hate: 1.1 },
  },
  { pattern: "go back to your country", weights: { hate: 1.1, harassment: 0.6 } },
  {
    pattern: "white power|master race|ethnic cleansing|racial purity|heil hitler|race war",
    weights: { hate: 1.5 },
  },
  { pattern: "nazi*|supremacis*", weights: { hate: 0.35 } },
  // self-harm
  {
    pattern: "suicid*|self harm*|selfharm*|self injur*|selfinjur*",
    weights: { "self-harm": 0.6 },
  },
  {
    pattern: "im|i am|i feel|i felt|feeling + so|very|really? + suicidal",
    weights: { "self-harm/intent": 1.5, "self-harm": 0.6 },
  },
  {
    pattern: "cutting myself|cut myself|hang myself|hanging myself",
    weights: { "self-harm": 0.9 },
  },
  { pattern: "overdos*", weights: { "self-harm": 0.5 } },
  {
    pattern: "@iwill + kill|hurt|cut|harm|end + myself|my life",
    weights: { "self-harm/intent": 1.9, "self-harm": 1.2 },
  },
  {
    pattern:
      "i want to die|i wanna die|wish i was dead|wish i were dead|dont want to live|dont want to be alive|no reason to live|better off dead",
    weights: { "self-harm/intent": 1.7, "self-harm": 1.1 },
  },
  {
    pattern: "take my own life|end my own life|my suicide note|say goodbye forever",
    weights: { "self-harm/intent": 1.3, "self-harm": 0.9 },
  },
  {
    pattern: "how to|ways to|best way to|how do i|how can i|easiest way to + @suicide",
    weights: { "self-harm/instructions": 2.1, "self-harm": 1.0 },
  },
  {
    pattern: "lethal dose|fatal dose|painless way to die|painless suicide|how many pills",
    weights: { "self-harm/instructions": 1.6, "self-harm": 0.8 },
  },
  {
    pattern: "suicide prevention|crisis line|hotline|helpline|get help",
    weights: { "self-harm": -0.5 },
  },
  // sexual
  { pattern: "porn*|xxx|nsfw|hentai|blowjob*|handjob*", weights: { sexual: 1.2 } },
  {
    pattern: "have sex|having sex|had sex|sexual intercourse|make love|orgasm*|masturbat*",
    weights: { sexual: 0.9 },
  },
  { pattern: "nude*|naked|topless|stripping|striptease", weights: { sexual: 0.55 } },
  { pattern: "sex|sexy|horny|erotic*|aroused|kinky|lingerie", weights: { sexual: 0.4 } },
  { pattern: "penis*|vagina*|genital*|boobs|tits|nipples", weights: { sexual: 0.4 } },
  {
    pattern: "sex education|sexual health|safe sex|sex ed",
    weights: { sexual: -1.4, "sexual/minors": -2.6 },
  },
  // sexual/minors
  { pattern: "@sexword + ~ + @minor", weights: { "sexual/minors": 2.6, sexual: 1.0 } },
  { pattern: "@minor + ~ + @sexword", weights: { "sexual/minors": 2.6, sexual: 1.0 } },
  {
    pattern: "child porn*|kiddie porn*|jailbait|pedo|pedos|pedophil*|paedo|paedophil*",
    weights: { "sexual/minors": 2.2, sexual: 0.8 },
  },
];
