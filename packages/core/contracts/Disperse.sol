// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20, safeTransferFrom} from "./IERC20.sol";

/// @title Disperse
/// @notice Pays many recipients in one transaction, in ETH or in an ERC-20 token. All transfers happen or none.
/// @dev Holds nothing between calls: ETH is forwarded as it arrives, tokens move straight from the sender to each
///      recipient. Recipients get ETH with a plain call and all remaining gas, so smart accounts (proxies whose
///      `receive` needs more than 2300 gas) can be paid.
contract Disperse {
    /// @notice `recipients` and `amounts` have different lengths.
    error LengthMismatch(uint256 recipients, uint256 amounts);

    /// @notice The ETH sent is not exactly the sum of `amounts`.
    error WrongValue(uint256 sent, uint256 total);

    /// @notice Paying ETH to the recipient at `index` failed with `reason`.
    error EtherTransferFailed(uint256 index, bytes reason);

    /// @notice The token transfer to the recipient at `index` failed; `reason` is the token's revert or return data.
    error TokenTransferFailed(uint256 index, bytes reason);

    /// @notice Sends `amounts[i]` wei to `recipients[i]` for each i; `msg.value` must equal the sum of `amounts`.
    function disperseEther(address[] calldata recipients, uint256[] calldata amounts) external payable {
        if (recipients.length != amounts.length) revert LengthMismatch(recipients.length, amounts.length);
        uint256 total = 0;
        for (uint256 i = 0; i < amounts.length; ++i) {
            total += amounts[i];
        }
        if (total != msg.value) revert WrongValue(msg.value, total);

        for (uint256 i = 0; i < recipients.length; ++i) {
            (bool success, bytes memory reason) = recipients[i].call{value: amounts[i]}("");
            if (!success) revert EtherTransferFailed(i, reason);
        }
    }

    /// @notice Moves `amounts[i]` of `token` from the caller to `recipients[i]` for each i. The caller must first
    ///         approve this contract for the sum of `amounts`.
    function disperseToken(IERC20 token, address[] calldata recipients, uint256[] calldata amounts) external {
        if (recipients.length != amounts.length) revert LengthMismatch(recipients.length, amounts.length);
        for (uint256 i = 0; i < recipients.length; ++i) {
            (bool success, bytes memory reason) = safeTransferFrom(token, msg.sender, recipients[i], amounts[i]);
            if (!success) revert TokenTransferFailed(i, reason);
        }
    }
}
