// The conformance fixtures, one file each in tools/ (names and texts are the suite's contract).
import type { Clock } from "../../../lib/clock.ts";
import type { AnyTool } from "./_fixture.ts";
import { testSimpleTextTool } from "./tools/test_simple_text.ts";
import { testImageContentTool } from "./tools/test_image_content.ts";
import { testAudioContentTool } from "./tools/test_audio_content.ts";
import { testEmbeddedResourceTool } from "./tools/test_embedded_resource.ts";
import { testMultipleContentTypesTool } from "./tools/test_multiple_content_types.ts";
import { testToolWithLoggingTool } from "./tools/test_tool_with_logging.ts";
import { testToolWithProgressTool } from "./tools/test_tool_with_progress.ts";
import { testErrorHandlingTool } from "./tools/test_error_handling.ts";
import { testSamplingTool } from "./tools/test_sampling.ts";
import { testElicitationTool } from "./tools/test_elicitation.ts";
import { testElicitationSep1034DefaultsTool } from "./tools/test_elicitation_sep1034_defaults.ts";
import { testElicitationSep1330EnumsTool } from "./tools/test_elicitation_sep1330_enums.ts";
import { jsonSchema202012ToolTool } from "./tools/json_schema_2020_12_tool.ts";
import { testCustomHeaderTool } from "./tools/test_custom_header.ts";
import { testStreamingElicitationTool } from "./tools/test_streaming_elicitation.ts";
import { testLoggingToolTool } from "./tools/test_logging_tool.ts";
import { testInputRequiredResultElicitationTool } from "./tools/test_input_required_result_elicitation.ts";
import { testInputRequiredResultSamplingTool } from "./tools/test_input_required_result_sampling.ts";
import { testInputRequiredResultListRootsTool } from "./tools/test_input_required_result_list_roots.ts";
import { testInputRequiredResultRequestStateTool } from "./tools/test_input_required_result_request_state.ts";
import { testInputRequiredResultTamperedStateTool } from "./tools/test_input_required_result_tampered_state.ts";
import { testInputRequiredResultMultipleInputsTool } from "./tools/test_input_required_result_multiple_inputs.ts";
import { testInputRequiredResultMultiRoundTool } from "./tools/test_input_required_result_multi_round.ts";
import { testInputRequiredResultCapabilitiesTool } from "./tools/test_input_required_result_capabilities.ts";
import { testMissingCapabilityTool } from "./tools/test_missing_capability.ts";
import { taskTools } from "./tools/tasks.ts";

/** The fixture tools; `clock` paces the tools whose scenarios expect gaps between messages. */
export function conformanceTools(clock: Clock): AnyTool[] {
  return [
    testSimpleTextTool(),
    testImageContentTool(),
    testAudioContentTool(),
    testEmbeddedResourceTool(),
    testMultipleContentTypesTool(),
    testToolWithLoggingTool(clock),
    testToolWithProgressTool(clock),
    testErrorHandlingTool(),
    testSamplingTool(),
    testElicitationTool(),
    testElicitationSep1034DefaultsTool(),
    testElicitationSep1330EnumsTool(),
    jsonSchema202012ToolTool(),
    testCustomHeaderTool(),
    testStreamingElicitationTool(),
    testLoggingToolTool(),
    testInputRequiredResultElicitationTool(),
    testInputRequiredResultSamplingTool(),
    testInputRequiredResultListRootsTool(),
    testInputRequiredResultRequestStateTool(),
    testInputRequiredResultTamperedStateTool(),
    testInputRequiredResultMultipleInputsTool(),
    testInputRequiredResultMultiRoundTool(),
    testInputRequiredResultCapabilitiesTool(),
    testMissingCapabilityTool(),
    ...taskTools(clock),
  ];
}
